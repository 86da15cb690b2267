import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { wakeDrain } from '../outbox/drain-outbox.js';

/** Deferred mail as a queue command picks it: waiting for an MX group, or for a recipient domain. */
export type DeferredTo = { column: 'deferred_groups' | 'deferred_domains'; value: string };

/**
 * The queued rows deferred to `to`, off the partial GIN index of their column (`email_<column>_idx`):
 * the `IS NOT NULL` is that index's predicate, said again so the planner need not prove it.
 */
export const deferredTo = (to: DeferredTo) =>
  `e.status = 'queued' AND e.${to.column} IS NOT NULL AND e.${to.column} @> ARRAY[?::text]`;

/**
 * Makes the mail deferred to `to` due now (by the database's clock, which the outbox's claim
 * compares against) and wakes a drain run for each region it is in, rather than leaving it to the
 * run booked for its old time. Returns how many emails.
 */
export async function makeDeferredMailDue(
  deps: Pick<Deps, 'orm' | 'jobs' | 'logger'>,
  em: EntityManager,
  to: DeferredTo,
): Promise<number> {
  const rows = await sqlQuery<{ region: string }>(
    em,
    `UPDATE email e SET send_after = least(e.send_after, now()), updated_at = now()
      WHERE ${deferredTo(to)} RETURNING e.region`,
    [to.value],
  );
  for (const region of new Set(rows.map((row) => row.region))) await wakeDrain(deps, region, new Date());
  return rows.length;
}
