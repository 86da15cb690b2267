import { broadcastSendJob } from './broadcast-send.job.js';
import { deliverabilityCheckJob } from './deliverability-check.job.js';
import { domainCheckJob } from './domain-check.job.js';
import { emailDrainJob } from './email-drain.job.js';
import { erasureJob } from './erasure.job.js';
import { maintenanceJob } from './maintenance.job.js';
import { outboxSweepJob } from './outbox-sweep.job.js';
import { webhookDeliverJob } from './webhook-deliver.job.js';

export const jobDefinitions = [
  emailDrainJob,
  broadcastSendJob,
  outboxSweepJob,
  maintenanceJob,
  domainCheckJob,
  erasureJob,
  webhookDeliverJob,
  deliverabilityCheckJob,
];
export { AgendaJobs } from './agenda.js';
export type { JobQueue, JobName, JobPayloads } from '../job-queue.js';
export { RecordingJobQueue } from '../job-queue.js';
