import { constant } from 'agenda';
import { checkDueDomains } from '../services/domains/verify-domain.js';
import { defineJob, NoDataSchema } from './define-job.js';

/** Re-checks the DNS of domains that are due: pending ones with backoff, verified ones daily. */
export const domainCheckJob = defineJob({
  name: 'domain.check',
  data: NoDataSchema,
  every: (config) => config.POSTLANE_DOMAIN_CHECK_INTERVAL_SECONDS * 1000,
  options: (config) => ({
    concurrency: 1,
    lockLimit: 1,
    // 20 domains one after another, each within three DNS timeouts (records are asked in parallel; DMARC may walk up to parents).
    lockLifetime: Math.max(60_000, 20 * 3 * (config.POSTLANE_DNS_TIMEOUT_MS + 1_000)),
    backoff: constant({ delay: 10_000, maxRetries: 1 }),
    removeOnComplete: false,
  }),
  run: async (deps) => {
    const checked = await checkDueDomains(deps);
    if (checked > 0) deps.logger.debug({ checked }, 'domain DNS checks done');
  },
});
