import { exponential } from 'agenda';
import * as v from 'valibot';
import { runContactImport } from '../services/contact-imports/run-contact-import.js';
import { defineJob } from './define-job.js';

export const contactImportJob = defineJob({
  name: 'contact-import.run',
  data: v.object({ importId: v.pipe(v.string(), v.uuid()) }),
  options: (config) => ({
    // An import is written by one run at a time (its cursor); two slots let a second team's import progress.
    concurrency: 2,
    lockLimit: 4,
    lockLifetime: config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS * 1000,
    backoff: exponential({ delay: 5_000, factor: 3, maxRetries: 5 }),
    removeOnComplete: true,
  }),
  run: async (deps, { importId }) => {
    await runContactImport(deps, importId);
  },
});
