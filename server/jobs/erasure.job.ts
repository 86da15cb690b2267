import { constant } from 'agenda';
import { runPendingErasures } from '../services/erasure/run-pending-erasures.js';
import { defineJob, NoDataSchema } from './define-job.js';

/** Deletes made with `erase` are scrubbed from history within this interval. */
export const ERASURE_INTERVAL_MS = 30_000;

export const erasureJob = defineJob({
  name: 'erasure.run',
  data: NoDataSchema,
  every: () => ERASURE_INTERVAL_MS,
  options: () => ({
    concurrency: 1,
    lockLimit: 1,
    lockLifetime: 30 * 60_000,
    backoff: constant({ delay: 30_000, maxRetries: 5 }),
    removeOnComplete: false,
  }),
  run: async (deps) => {
    const erased = await runPendingErasures(deps);
    if (erased > 0) deps.logger.info({ addresses: erased }, 'erasure requests done');
  },
});
