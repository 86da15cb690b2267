import { constant } from 'agenda';
import { purgeWebhookDeliveries } from '../services/webhooks/purge-webhook-deliveries.js';
import { defineJob, NoDataSchema } from './define-job.js';

export const webhookPurgeJob = defineJob({
  name: 'webhook.purge',
  data: NoDataSchema,
  every: () => 3600 * 1000,
  options: () => ({
    concurrency: 1,
    lockLimit: 1,
    lockLifetime: 10 * 60_000,
    backoff: constant({ delay: 60_000, maxRetries: 2 }),
    removeOnComplete: false,
  }),
  run: async (deps) => {
    const purged = await purgeWebhookDeliveries(deps);
    if (purged > 0) deps.logger.info({ purged }, 'old webhook deliveries purged');
  },
});
