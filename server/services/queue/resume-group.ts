import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { makeDeferredMailDue } from './deferred-mail.js';
import {
  changedRows,
  type GroupChange,
  type QueueDeps,
  type QueueMailDeps,
  resolveQueueTarget,
} from './queue-target.js';

/** An MX group's rows with their suspension lifted and back-off forgotten, from every source IP. */
export function liftSuspension(deps: Pick<QueueDeps, 'clock'>, em: EntityManager, group: string) {
  return sqlQuery<{ source_ip: string }>(
    em,
    `UPDATE shaping_state SET suspended_until = NULL, backoff_level = 0, backoff_changed_at = ?,
       recent_failures = '[]'::jsonb
     WHERE mx_group = ? RETURNING source_ip`,
    [deps.clock(), group],
    'postlane_queue_resume',
  );
}

/**
 * Lifts an MX group's suspension and forgets its back-off, from every source IP: it is sent to at
 * once, and its deferred mail is due now rather than at the suspension's end.
 */
export async function resumeGroup(deps: QueueMailDeps, target: string): Promise<GroupChange & { emails: number }> {
  const resolved = await resolveQueueTarget(deps, target);
  const em = deps.orm.em.fork();
  const change = changedRows(resolved, await liftSuspension(deps, em, resolved.group), null);
  const emails = await makeDeferredMailDue(deps, em, { column: 'deferred_groups', value: resolved.group });
  return { ...change, emails };
}
