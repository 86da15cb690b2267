import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { eraseAddresses } from './erase-addresses.js';

/** Scrubs the addresses of deletes made with `erase` (their erasure requests), a team at a time. */
export async function runPendingErasures(deps: Pick<Deps, 'orm' | 'secrets'>): Promise<number> {
  const pending = await sqlQuery<{ team_id: string; emails: string[] }>(
    deps.orm.em,
    `SELECT team_id, array_agg(DISTINCT email) AS emails FROM erasure_request WHERE completed_at IS NULL GROUP BY team_id LIMIT 100`,
  );
  for (const { team_id, emails } of pending) await eraseAddresses(deps, team_id, emails);
  return pending.reduce((sum, p) => sum + p.emails.length, 0);
}
