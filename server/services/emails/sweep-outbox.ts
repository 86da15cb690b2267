import type { Deps } from '../../deps.js';
import { enqueueSend } from './send-email.js';

/**
 * Re-enqueues emails that are due but have no live job: an enqueue lost between commit and
 * Agenda, or a job row that gave up. Extra jobs are harmless, the send job's claim dedupes.
 */
export async function sweepOutbox(deps: Deps, limit = 1000): Promise<number> {
  // Raw rows carry timestamps as strings.
  const rows = await deps.orm.em.getConnection().execute<{ id: string; send_after: string }[]>(
    `SELECT e.id, e.send_after FROM email e
      WHERE ((e.status = 'queued' AND e.send_after < now() - make_interval(secs => ?))
          OR (e.status = 'sending' AND e.lease_expires_at < now()))
        AND NOT EXISTS (
          SELECT 1 FROM agenda_jobs j
           WHERE j.name = 'email.send' AND j.data->>'emailId' = e.id::text
             AND (j.next_run_at IS NOT NULL OR j.locked_at IS NOT NULL))
      ORDER BY e.send_after LIMIT ?`,
    [deps.config.POSTLANE_SWEEP_AFTER_SECONDS, limit],
  );
  for (const row of rows) await enqueueSend(deps, { id: row.id, sendAfter: new Date(row.send_after) });
  if (rows.length > 0) deps.logger.info({ count: rows.length }, 'outbox sweeper re-enqueued emails');
  return rows.length;
}
