import { exponential } from 'agenda';
import * as v from 'valibot';
import { drainOutbox } from '../services/outbox/drain-outbox.js';
import { defineJob } from './define-job.js';

/** Drain runs one worker process keeps going at once: one per region it serves, and at least two. */
const drainsPerProcess = (config: { POSTLANE_PROVIDERS: { regions: readonly string[] }[] }) =>
  Math.max(2, config.POSTLANE_PROVIDERS.flatMap((p) => p.regions).length);

/** Sends a region's due emails in batches; Agenda only wakes it, the email rows are the truth. */
export const emailDrainJob = defineJob({
  name: 'email.drain',
  data: v.object({ region: v.pipe(v.string(), v.minLength(1)) }),
  options: (config) => ({
    concurrency: drainsPerProcess(config),
    lockLimit: drainsPerProcess(config) * 2,
    // A run claims for the lock lifetime less one lease, and sends what it claimed within 80% of a
    // lease: it ends inside its lock, so it is never picked up twice while running (pitfall A6).
    lockLifetime: config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS * 1000,
    // Only unexpected errors (database trouble) land here; provider failures are retried on the rows.
    backoff: exponential({ delay: 5_000, factor: 3, maxRetries: 5 }),
    removeOnComplete: true,
  }),
  run: (deps, { region }) => drainOutbox(deps, region),
});
