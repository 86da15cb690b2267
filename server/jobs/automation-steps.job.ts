import { exponential } from 'agenda';
import { drainAutomationSteps } from '../services/automations/drain-automation-steps.js';
import { defineJob, NoDataSchema } from './define-job.js';

/** Executes due automation steps; Agenda only wakes it, the step rows are the truth. */
export const automationStepsJob = defineJob({
  name: 'automation.steps',
  data: NoDataSchema,
  options: (config) => ({
    // Claims skip each other's rows, so two runs per worker keep one batch executing while the other commits.
    concurrency: 2,
    lockLimit: 4,
    lockLifetime: config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS * 1000,
    backoff: exponential({ delay: 5_000, factor: 3, maxRetries: 5 }),
    removeOnComplete: true,
  }),
  run: async (deps) => {
    await drainAutomationSteps(deps);
  },
});
