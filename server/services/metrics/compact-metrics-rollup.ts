import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { COUNTED_METRICS } from './metric-names.js';

/** Slot rows folded per statement, so a large backlog never holds long locks or one huge transaction. */
const CHUNK = 20_000;

/**
 * Folds the per-backend slots of the rollup's past hours into slot 0. Slots keep concurrent writers
 * off one another's rows while an hour is live; once it has passed, a reader summing 30 days would
 * otherwise read one row per backend that ever wrote to each hour, domain and broadcast (16 times
 * the rows at 16 backends). Each chunk moves rows in one statement, so the sums never change; a late
 * write to a folded hour (a first open retracted) lands in a slot again and is folded next time.
 */
export async function compactMetricsRollup(deps: Pick<Deps, 'orm' | 'clock'>): Promise<number> {
  const before = new Date(Math.floor(deps.clock().getTime() / 3_600_000) * 3_600_000 - 3_600_000);
  const sums = COUNTED_METRICS.map((c) => `sum(${c})`).join(', ');
  const adds = COUNTED_METRICS.map((c) => `${c} = m.${c} + excluded.${c}`).join(', ');
  let total = 0;
  for (;;) {
    const [row] = await sqlQuery<{ n: number }>(
      deps.orm.em,
      `WITH gone AS (
         DELETE FROM email_metrics_hourly WHERE ctid IN (
           SELECT ctid FROM email_metrics_hourly WHERE slot <> 0 AND hour < ? LIMIT ${CHUNK})
         RETURNING *),
       folded AS (
         INSERT INTO email_metrics_hourly AS m (team_id, hour, domain, broadcast_id, slot, ${COUNTED_METRICS.join(', ')})
         SELECT team_id, hour, domain, broadcast_id, 0, ${sums} FROM gone GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
         ON CONFLICT (team_id, hour, domain, broadcast_id, slot) DO UPDATE SET ${adds})
       SELECT count(*)::int AS n FROM gone`,
      [before],
    );
    total += row!.n;
    if (row!.n < CHUNK) return total;
  }
}
