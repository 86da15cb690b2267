import { constant } from 'agenda';
import { runMaintenance } from '../services/maintenance/run-maintenance.js';
import { defineJob, NoDataSchema } from './define-job.js';

/** The same upkeep as `postlane maintenance run`, hourly on whichever worker takes it. */
export const maintenanceJob = defineJob({
  name: 'maintenance.run',
  data: NoDataSchema,
  every: () => 3600 * 1000,
  options: () => ({
    concurrency: 1,
    lockLimit: 1,
    lockLifetime: 30 * 60_000,
    backoff: constant({ delay: 60_000, maxRetries: 2 }),
    removeOnComplete: false,
  }),
  run: async (deps) => {
    const outcomes = await runMaintenance(deps);
    const failed = outcomes.filter((o) => o.error);
    deps.logger.info({ outcomes }, 'maintenance done');
    if (failed.length > 0)
      throw new Error(`maintenance failed: ${failed.map((o) => `${o.task}: ${o.error}`).join('; ')}`);
  },
});
