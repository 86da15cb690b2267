import type { Deps } from '../../deps.js';
import { notifyOwners, webhookNotices } from './notify-owners.js';

const BACKLOG_NOTICE_AGE_MS = 6 * 3600 * 1000;
const BACKLOG_NOTICE_EVERY_MS = 24 * 3600 * 1000;

/**
 * The safety net of the webhook outbox: wakes every endpoint with work due a while ago and nobody
 * draining it (a wake lost between commit and Agenda, a worker that died holding its lease).
 * Extra wakes are harmless; the endpoint lease dedupes them. Also sends the daily backlog notice.
 */
export async function sweepWebhooks(deps: Deps): Promise<{ woken: number; backlogNotices: number }> {
  const now = deps.clock();
  const connection = deps.orm.em.getConnection();
  const dueBefore = new Date(now.getTime() - deps.config.POSTLANE_SWEEP_AFTER_SECONDS * 1000);
  const stranded = await connection.execute<{ id: string }[]>(
    `SELECT e.id FROM webhook_endpoint e
      WHERE e.status = 'enabled' AND (e.drain_lease_expires_at IS NULL OR e.drain_lease_expires_at < now())
        AND EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.endpoint_id = e.id
                     AND ((d.status IN ('pending', 'retry') AND d.due_at <= ?) OR (d.status = 'sending' AND d.lease_expires_at < ?)))`,
    [dueBefore, now],
  );
  for (const { id } of stranded) await deps.jobs.enqueue('webhook.deliver', { endpointId: id });
  if (stranded.length > 0)
    deps.logger.info({ count: stranded.length }, 'webhook sweep woke endpoints with overdue deliveries');

  const backlogged = await connection.execute<{ id: string; team_id: string; url: string; oldest: string }[]>(
    `WITH oldest AS (
       SELECT d.endpoint_id, min(d.queued_at) AS queued_at FROM webhook_delivery d
        WHERE d.status IN ('pending', 'retry', 'sending') GROUP BY d.endpoint_id)
     UPDATE webhook_endpoint e SET backlog_notice_at = ?
       FROM oldest o
      WHERE o.endpoint_id = e.id AND e.status = 'enabled' AND o.queued_at < ? AND (e.backlog_notice_at IS NULL OR e.backlog_notice_at <= ?)
     RETURNING e.id, e.team_id, e.url, o.queued_at AS oldest`,
    [now, new Date(now.getTime() - BACKLOG_NOTICE_AGE_MS), new Date(now.getTime() - BACKLOG_NOTICE_EVERY_MS)],
  );
  for (const endpoint of backlogged) {
    await notifyOwners(deps, endpoint.team_id, webhookNotices.backlog(endpoint.url, new Date(endpoint.oldest))).catch(
      (err: Error) =>
        deps.logger.error({ endpointId: endpoint.id, err: err.message }, 'could not notify the team owners'),
    );
  }
  return { woken: stranded.length, backlogNotices: backlogged.length };
}
