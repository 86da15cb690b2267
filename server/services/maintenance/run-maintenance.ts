import type { Deps } from '../../deps.js';
import { compactMetricsRollup } from '../metrics/compact-metrics-rollup.js';
import { addEmailPartitions, dropExpiredEmailPartitions } from './email-partitions.js';
import {
  purgeApiLogs,
  purgeAutomationRuns,
  purgeCustomEvents,
  purgeEmailTracking,
  purgeCapturedMessages,
  purgeFinishedJobs,
  purgeIdempotencyKeys,
  purgeIngestedNotifications,
  purgeReceivedEmails,
  purgeTrackingClicks,
  purgeWebhookDeliveries,
} from './purges.js';
import { MAINTENANCE_TASK_CATALOGUE, type MaintenanceTaskName } from './task-catalogue.js';

type MaintenanceDeps = Pick<Deps, 'orm' | 'clock' | 'config'>;

/** How each task of the catalogue runs: each answers how many rows it removed, or what its `counts` names. */
const RUNS: Record<MaintenanceTaskName, (deps: MaintenanceDeps) => Promise<number>> = {
  email_partitions: addEmailPartitions,
  email_retention: dropExpiredEmailPartitions,
  email_tracking: purgeEmailTracking,
  idempotency_keys: purgeIdempotencyKeys,
  api_logs: purgeApiLogs,
  webhook_deliveries: purgeWebhookDeliveries,
  captured_mail: purgeCapturedMessages,
  received_mail: purgeReceivedEmails,
  automation_runs: purgeAutomationRuns,
  custom_events: purgeCustomEvents,
  metrics_rollup: compactMetricsRollup,
  finished_jobs: purgeFinishedJobs,
  ingested_notifications: purgeIngestedNotifications,
  tracking_clicks: purgeTrackingClicks,
};

/** Every piece of routine upkeep, in the catalogue's order: each is idempotent and safe to run at any time, from cron or a worker. */
export const MAINTENANCE_TASKS: {
  name: string;
  title: string;
  run: (deps: MaintenanceDeps) => Promise<number>;
  counts?: string;
}[] = Object.entries(MAINTENANCE_TASK_CATALOGUE).map(([name, entry]) => ({
  name,
  ...entry,
  run: RUNS[name as MaintenanceTaskName],
}));

export interface MaintenanceOutcome {
  task: string;
  removed: number | null;
  error: string | null;
  ms: number;
}

/** Runs every task even when one fails; the caller decides what a failure means (the CLI exits 1). */
export async function runMaintenance(deps: MaintenanceDeps): Promise<MaintenanceOutcome[]> {
  const outcomes: MaintenanceOutcome[] = [];
  for (const task of MAINTENANCE_TASKS) {
    const started = Date.now();
    try {
      outcomes.push({ task: task.name, removed: await task.run(deps), error: null, ms: Date.now() - started });
    } catch (err) {
      outcomes.push({ task: task.name, removed: null, error: (err as Error).message, ms: Date.now() - started });
    }
  }
  return outcomes;
}
