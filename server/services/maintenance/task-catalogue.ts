/**
 * What each maintenance task does, by name: data alone (no database code), so that
 * `postlane maintenance run --help` lists the registry without loading it.
 */

/** Days made ahead of today: the hourly maintenance can miss three days before rows reach the DEFAULT partition. */
export const DAYS_AHEAD = 3;

export const MAINTENANCE_TASK_CATALOGUE = {
  email_partitions: {
    title: `Create the email partitions of the next ${DAYS_AHEAD} days`,
    counts: 'partitions created',
  },
  email_retention: {
    title: 'Drop the days of emails and events past POSTLANE_EMAIL_RETENTION_DAYS',
    counts: 'partitions dropped',
  },
  email_tracking: { title: 'Purge open state of emails past POSTLANE_EMAIL_RETENTION_DAYS' },
  idempotency_keys: { title: 'Purge idempotency keys older than 24 hours' },
  api_logs: { title: 'Purge API logs past POSTLANE_API_LOG_RETENTION_DAYS' },
  webhook_deliveries: { title: 'Purge webhook deliveries past POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS' },
  captured_mail: { title: 'Purge captured mail past POSTLANE_CAPTURE_RETENTION_DAYS' },
  received_mail: { title: 'Purge received mail past POSTLANE_RECEIVED_RETENTION_DAYS' },
  automation_runs: { title: 'Purge finished automation runs past POSTLANE_AUTOMATION_RETENTION_DAYS' },
  custom_events: { title: 'Purge sent custom events past POSTLANE_AUTOMATION_RETENTION_DAYS' },
  metrics_rollup: {
    title: 'Fold the email metrics rollup of past hours into one row per hour, domain and broadcast',
    counts: 'rows folded',
  },
  contact_tally: {
    title:
      "Fold the per-connection rows of each team's contact counts into one, and drop property values no contact holds",
    counts: 'rows folded',
  },
  finished_jobs: { title: 'Purge finished job rows past POSTLANE_JOB_RETENTION_DAYS' },
  ingested_notifications: { title: 'Purge provider notification ids (SNS dedupe) older than 14 days' },
  tracking_clicks: { title: 'Purge click records (burst detection) older than 14 days' },
} satisfies Record<string, { title: string; counts?: string }>;

export type MaintenanceTaskName = keyof typeof MAINTENANCE_TASK_CATALOGUE;
