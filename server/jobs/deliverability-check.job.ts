import { constant } from 'agenda';
import { checkDeliverability } from '../services/deliverability/check-deliverability.js';
import { defineJob, NoDataSchema } from './define-job.js';

/** Judges the bounce and complaint rates again as the window slides (recovery) and per region. */
export const deliverabilityCheckJob = defineJob({
  name: 'deliverability.check',
  data: NoDataSchema,
  every: (config) => config.POSTLANE_DELIVERABILITY_CHECK_SECONDS * 1000,
  options: () => ({
    concurrency: 1,
    lockLimit: 1,
    lockLifetime: 5 * 60_000,
    // The next tick is at most an hour away; one quick retry covers a blip.
    backoff: constant({ delay: 10_000, maxRetries: 1 }),
    removeOnComplete: false,
  }),
  run: async (deps) => {
    const outcome = await checkDeliverability(deps);
    if (outcome.teams > 0 || outcome.regionsPaused.length > 0) deps.logger.debug(outcome, 'deliverability judged');
  },
});
