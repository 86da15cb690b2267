import type { Deps } from '../../deps.js';
import { foldContactTally } from '../contacts/fold-contact-tally.js';
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
<<<<<<< HEAD
}[] = Object.entries(MAINTENANCE_TASK_CATALOGUE).map(([name, entry]) => ({
  name,
  ...entry,
  run: RUNS[name as MaintenanceTaskName],
}));
=======
}[] = [
  {
    name: 'email_partitions',
    title: `Create the email partitions of the next ${DAYS_AHEAD} days`,
    run: addEmailPartitions,
    counts: 'partitions created',
  },
  {
    name: 'email_retention',
    title: 'Drop the days of emails and events past POSTLANE_EMAIL_RETENTION_DAYS',
    run: dropExpiredEmailPartitions,
    counts: 'partitions dropped',
  },
  {
    name: 'email_tracking',
    title: 'Purge open state of emails past POSTLANE_EMAIL_RETENTION_DAYS',
    run: purgeEmailTracking,
  },
  { name: 'idempotency_keys', title: 'Purge idempotency keys older than 24 hours', run: purgeIdempotencyKeys },
  { name: 'api_logs', title: 'Purge API logs past POSTLANE_API_LOG_RETENTION_DAYS', run: purgeApiLogs },
  {
    name: 'webhook_deliveries',
    title: 'Purge webhook deliveries past POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS',
    run: purgeWebhookDeliveries,
  },
  {
    name: 'captured_mail',
    title: 'Purge captured mail past POSTLANE_CAPTURE_RETENTION_DAYS',
    run: purgeCapturedMessages,
  },
  {
    name: 'received_mail',
    title: 'Purge received mail past POSTLANE_RECEIVED_RETENTION_DAYS',
    run: purgeReceivedEmails,
  },
  {
    name: 'automation_runs',
    title: 'Purge finished automation runs past POSTLANE_AUTOMATION_RETENTION_DAYS',
    run: purgeAutomationRuns,
  },
  {
    name: 'custom_events',
    title: 'Purge sent custom events past POSTLANE_AUTOMATION_RETENTION_DAYS',
    run: purgeCustomEvents,
  },
  {
    name: 'metrics_rollup',
    title: 'Fold the email metrics rollup of past hours into one row per hour, domain and broadcast',
    run: compactMetricsRollup,
    counts: 'rows folded',
  },
  {
    name: 'contact_tally',
    title: "Fold the per-connection rows of each team's contact count into one",
    run: foldContactTally,
    counts: 'rows folded',
  },
  { name: 'finished_jobs', title: 'Purge finished job rows past POSTLANE_JOB_RETENTION_DAYS', run: purgeFinishedJobs },
  {
    name: 'ingested_notifications',
    title: 'Purge provider notification ids (SNS dedupe) older than 14 days',
    run: purgeIngestedNotifications,
  },
  {
    name: 'tracking_clicks',
    title: 'Purge click records (burst detection) older than 14 days',
    run: purgeTrackingClicks,
  },
];
>>>>>>> segments

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
