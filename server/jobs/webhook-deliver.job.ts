import { exponential } from 'agenda';
import * as v from 'valibot';
import { drainEndpoint, drainRunLimitMs } from '../services/webhooks/drain-endpoint.js';
import { defineJob } from './define-job.js';

/** Drains one endpoint's due deliveries; Agenda only wakes it, the delivery rows are the truth. */
export const webhookDeliverJob = defineJob({
  name: 'webhook.deliver',
  data: v.object({ endpointId: v.pipe(v.string(), v.uuid()) }),
  options: (config) => ({
    concurrency: config.POSTLANE_WEBHOOK_WORKERS,
    lockLimit: config.POSTLANE_WEBHOOK_WORKERS * 2,
    // Above the longest a run can last, so a running drain is never picked up twice (pitfall A6).
    lockLifetime: drainRunLimitMs({ config }) + 30_000,
    // Only unexpected errors (database trouble) land here; delivery failures are retried on the rows.
    backoff: exponential({ delay: 5_000, factor: 3, maxRetries: 5 }),
    removeOnComplete: true,
  }),
  run: (deps, { endpointId }) => drainEndpoint(deps, endpointId),
});
