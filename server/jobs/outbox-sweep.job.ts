import { constant } from 'agenda';
import { sweepBroadcasts } from '../services/broadcasts/run-broadcast.js';
import { sweepOutbox } from '../services/outbox/sweep-outbox.js';
import { sweepWebhooks } from '../services/webhooks/sweep-webhooks.js';
import { defineJob, NoDataSchema } from './define-job.js';

export const outboxSweepJob = defineJob({
  name: 'outbox.sweep',
  data: NoDataSchema,
  every: (config) => config.POSTLANE_SWEEP_INTERVAL_SECONDS * 1000,
  options: () => ({
    concurrency: 1,
    lockLimit: 1,
    lockLifetime: 60_000,
    // The next tick is a minute away anyway; one quick retry covers a blip.
    backoff: constant({ delay: 10_000, maxRetries: 1 }),
    removeOnComplete: false,
  }),
  // Both outboxes: emails, and webhook deliveries (with the daily backlog notice).
  run: async (deps) => {
    await sweepOutbox(deps);
    await sweepWebhooks(deps);
    await sweepBroadcasts(deps);
  },
});
