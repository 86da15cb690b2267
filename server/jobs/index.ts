import { emailSendJob } from './email-send.job.js';
import { idempotencyPurgeJob } from './idempotency-purge.job.js';
import { outboxSweepJob } from './outbox-sweep.job.js';
import { webhookDeliverJob } from './webhook-deliver.job.js';
import { webhookPurgeJob } from './webhook-purge.job.js';

export const jobDefinitions = [emailSendJob, outboxSweepJob, idempotencyPurgeJob, webhookDeliverJob, webhookPurgeJob];
export { AgendaJobs } from './agenda.js';
export type { JobQueue, JobName, JobPayloads } from './job-queue.js';
export { RecordingJobQueue } from './job-queue.js';
