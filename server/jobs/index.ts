import { emailSendJob } from './email-send.job.js';
import { outboxSweepJob } from './outbox-sweep.job.js';

export const jobDefinitions = [emailSendJob, outboxSweepJob];
export { AGENDA_NOTIFY_CHANNEL, AgendaJobs } from './agenda.js';
export type { JobQueue, JobName, JobPayloads } from './job-queue.js';
export { RecordingJobQueue } from './job-queue.js';
