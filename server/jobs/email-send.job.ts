import { exponential } from 'agenda';
import * as v from 'valibot';
import { deliverEmail } from '../services/emails/deliver-email.js';
import { defineJob } from './define-job.js';

export const emailSendJob = defineJob({
  name: 'email.send',
  data: v.object({ emailId: v.pipe(v.string(), v.uuid()) }),
  options: (config) => ({
    concurrency: config.POSTLANE_JOB_CONCURRENCY,
    lockLimit: config.POSTLANE_JOB_CONCURRENCY * 2,
    lockLifetime: config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS * 1000,
    // Only unexpected errors (database trouble) land here; provider failures are retried on the row itself.
    backoff: exponential({ delay: 5_000, factor: 3, maxRetries: 5 }),
    removeOnComplete: true,
  }),
  run: (deps, { emailId }) => deliverEmail(deps, emailId),
});
