import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';

/**
 * Folds each team's per-backend `contact_tally` slots into slot 0 (see the table's migration), so a
 * segment count sums a row or two rather than one per backend that ever wrote contacts. One
 * statement moves the rows, so the sum never changes; a slot whose writer's transaction is still
 * open is skipped, and folded next time.
 */
export async function foldContactTally(deps: Pick<Deps, 'orm'>): Promise<number> {
  const [row] = await sqlQuery<{ n: number }>(
    deps.orm.em,
    `WITH gone AS (
       DELETE FROM contact_tally WHERE ctid IN (SELECT ctid FROM contact_tally WHERE slot <> 0 FOR UPDATE SKIP LOCKED)
       RETURNING team_id, contacts),
     folded AS (
       INSERT INTO contact_tally AS t (team_id, slot, contacts)
       SELECT team_id, 0, sum(contacts) FROM gone GROUP BY team_id ORDER BY team_id
       ON CONFLICT (team_id, slot) DO UPDATE SET contacts = t.contacts + excluded.contacts)
     SELECT count(*)::int AS n FROM gone`,
  );
  return row!.n;
}
