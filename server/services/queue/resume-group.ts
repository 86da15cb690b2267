import { sqlQuery } from '../../db/query.js';
import { changedRows, type GroupChange, type QueueDeps, resolveQueueTarget } from './queue-target.js';

/** Lifts an MX group's suspension and forgets its back-off, from every source IP: it is sent to at once. */
export async function resumeGroup(deps: QueueDeps, target: string): Promise<GroupChange> {
  const resolved = await resolveQueueTarget(deps, target);
  const rows = await sqlQuery<{ source_ip: string }>(
    deps.orm.em.fork(),
    `UPDATE shaping_state SET suspended_until = NULL, backoff_level = 0, backoff_changed_at = ?,
       recent_failures = '[]'::jsonb
     WHERE mx_group = ? RETURNING source_ip`,
    [deps.clock(), resolved.group],
    'postlane_queue_resume',
  );
  return changedRows(resolved, rows, null);
}
