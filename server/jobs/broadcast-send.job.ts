import { exponential } from 'agenda';
import * as v from 'valibot';
import { runBroadcast } from '../services/broadcasts/run-broadcast.js';
import { defineJob } from './define-job.js';

export const broadcastSendJob = defineJob({
  name: 'broadcast.send',
  data: v.object({ broadcastId: v.pipe(v.string(), v.uuid()) }),
  options: (config) => ({
    // A broadcast is walked by one run at a time (its row lock); a few slots let several regions progress.
    concurrency: 2,
    lockLimit: 4,
    lockLifetime: config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS * 1000,
    backoff: exponential({ delay: 5_000, factor: 3, maxRetries: 5 }),
    removeOnComplete: true,
  }),
  run: (deps, { broadcastId }) => runBroadcast(deps, broadcastId),
});
