import { broadcastSendJob } from './broadcast-send.job.js';
import { emailSendJob } from './email-send.job.js';
import { maintenanceJob } from './maintenance.job.js';
import { outboxSweepJob } from './outbox-sweep.job.js';

export const jobDefinitions = [emailSendJob, broadcastSendJob, outboxSweepJob, maintenanceJob];
export { AgendaJobs } from './agenda.js';
export type { JobQueue, JobName, JobPayloads } from './job-queue.js';
export { RecordingJobQueue } from './job-queue.js';
