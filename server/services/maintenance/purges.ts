import type { Deps } from '../../deps.js';
import { INGESTED_RETENTION_DAYS } from '../provider-reports/ingest-sns.js';

type PurgeDeps = Pick<Deps, 'orm' | 'clock' | 'config'>;

/** Rows are deleted this many at a time, so a large backlog never holds long locks or one huge transaction. */
const CHUNK = 5_000;

const daysAgo = (deps: PurgeDeps, days: number) => new Date(deps.clock().getTime() - days * 86_400_000);

/** Deletes, chunk by chunk, the rows of `table` that `condition` (binding `?` to `cutoff`) selects. */
async function purgeInChunks(deps: PurgeDeps, table: string, condition: string, cutoff: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await deps.orm.em
      .getConnection()
      .execute<{ n: number }[]>(
        `WITH gone AS (DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE ${condition} LIMIT ${CHUNK}) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        [cutoff],
      );
    total += removed[0]!.n;
    if (removed[0]!.n < CHUNK) return total;
  }
}

/** Keys answer for 24 hours; older rows are already treated as absent, this only reclaims the space. */
export const purgeIdempotencyKeys = (deps: PurgeDeps) =>
  purgeInChunks(deps, 'idempotency_key', 'created_at < ?', daysAgo(deps, 1));

export const purgeApiLogs = (deps: PurgeDeps) =>
  purgeInChunks(deps, 'api_log', 'created_at < ?', daysAgo(deps, deps.config.POSTLANE_API_LOG_RETENTION_DAYS));

export const purgeCapturedMessages = (deps: PurgeDeps) =>
  purgeInChunks(deps, 'captured_message', 'created_at < ?', daysAgo(deps, deps.config.POSTLANE_CAPTURE_RETENTION_DAYS));

/**
 * One-off job rows that finished or failed for good. The outbox tables are the record of what
 * happened; these rows only woke workers. Recurring and running jobs are never touched.
 */
export const purgeFinishedJobs = (deps: PurgeDeps) =>
  purgeInChunks(
    deps,
    'agenda_jobs',
    'repeat_interval IS NULL AND locked_at IS NULL AND (next_run_at IS NULL OR failed_at IS NOT NULL) AND greatest(last_finished_at, failed_at) < ?',
    daysAgo(deps, deps.config.POSTLANE_JOB_RETENTION_DAYS),
  );

/** Received mail past POSTLANE_RECEIVED_RETENTION_DAYS: raw bytes, parsed fields and (cascade) attachments. */
export const purgeReceivedEmails = (deps: PurgeDeps) =>
  purgeInChunks(deps, 'received_email', 'created_at < ?', daysAgo(deps, deps.config.POSTLANE_RECEIVED_RETENTION_DAYS));

/** Settled webhook deliveries (their attempts go with them) past POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS. */
export const purgeWebhookDeliveries = (deps: PurgeDeps) =>
  purgeInChunks(
    deps,
    'webhook_delivery',
    "status IN ('delivered', 'exhausted') AND created_at < ?",
    daysAgo(deps, deps.config.POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS),
  );

/**
 * Applied SNS MessageIds, kept to recognise a second copy: SNS retries an HTTPS delivery for at
 * most a few days even under the longest delivery policy, and older messages are refused.
 */
export const purgeIngestedNotifications = (deps: PurgeDeps) =>
  purgeInChunks(deps, 'ingested_notification', 'received_at < ?', daysAgo(deps, INGESTED_RETENTION_DAYS));

/** Open state of tracked emails, by its own age (the row is small and written on the first open): it goes with POSTLANE_EMAIL_RETENTION_DAYS. */
export const purgeEmailTracking = (deps: PurgeDeps) =>
  purgeInChunks(deps, 'email_tracking', 'created_at < ?', daysAgo(deps, deps.config.POSTLANE_EMAIL_RETENTION_DAYS));

/**
 * Clicks kept to judge bursts: the next click on the same email prunes its own, but an email never
 * clicked again keeps them. No click older than an ingested event can be (14 days) still matters.
 */
export const purgeTrackingClicks = (deps: PurgeDeps) =>
  purgeInChunks(deps, 'tracking_click', 'clicked_at < ?', daysAgo(deps, INGESTED_RETENTION_DAYS));
