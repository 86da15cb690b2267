import { constant } from 'agenda';
import { purgeIdempotencyKeys } from '../services/maintenance/purge-idempotency-keys.js';
import { defineJob, NoDataSchema } from './define-job.js';

export const idempotencyPurgeJob = defineJob({
  name: 'idempotency.purge',
  data: NoDataSchema,
  every: () => 3600 * 1000,
  options: () => ({
    concurrency: 1,
    lockLimit: 1,
    lockLifetime: 5 * 60_000,
    backoff: constant({ delay: 60_000, maxRetries: 2 }),
    removeOnComplete: false,
  }),
  run: async (deps) => {
    const purged = await purgeIdempotencyKeys(deps);
    if (purged > 0) deps.logger.info({ purged }, 'expired idempotency keys purged');
  },
});
