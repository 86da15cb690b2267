import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';

/**
 * Folds each team's per-backend slots of `contact_tally` and `contact_field_tally` into slot 0 (see
 * the tables' migrations), so a segment count sums a row or two rather than one per backend that
 * ever wrote contacts. One statement moves a table's rows, so the sums never change; a slot whose
 * writer's transaction is still open is skipped, and folded next time. Then drops the property
 * values no contact holds any more (`purgePropertyValues`). Answers the rows folded and dropped.
 */
export async function foldContactTally(deps: Pick<Deps, 'orm'>): Promise<number> {
  let changed = 0;
  for (const { table, key } of [
    { table: 'contact_tally', key: 'team_id' },
    { table: 'contact_field_tally', key: 'team_id, field' },
  ]) {
    const [row] = await sqlQuery<{ n: number }>(
      deps.orm.em,
      `WITH gone AS (
         DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE slot <> 0 FOR UPDATE SKIP LOCKED)
         RETURNING ${key}, contacts),
       folded AS (
         INSERT INTO ${table} AS t (${key}, slot, contacts)
         SELECT ${key}, 0, sum(contacts) FROM gone GROUP BY ${key} ORDER BY ${key}
         ON CONFLICT (${key}, slot) DO UPDATE SET contacts = t.contacts + excluded.contacts)
       SELECT count(*)::int AS n FROM gone`,
    );
    changed += row!.n;
  }
  return changed + (await purgePropertyValues(deps));
}

/**
 * Drops the rows of `contact_property_value` whose term no contact holds (an edited or deleted
 * contact leaves its old values there; they count nobody). The table lock waits for every writer
 * that added values to commit, so their terms are seen, and holds new writers back until the
 * purge commits: no value a contact holds can go.
 */
async function purgePropertyValues(deps: Pick<Deps, 'orm'>): Promise<number> {
  return deps.orm.em.transactional(async (em) => {
    await sqlQuery(em, 'LOCK TABLE contact_property_value IN SHARE ROW EXCLUSIVE MODE');
    const [row] = await sqlQuery<{ n: number }>(
      em,
      `WITH gone AS (
         DELETE FROM contact_property_value v
          WHERE NOT EXISTS (SELECT 1 FROM contact_property_term t WHERE t.term = v.term)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
    );
    return row!.n;
  });
}
