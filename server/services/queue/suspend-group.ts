import { validationError } from '../../errors.js';
import { sqlQuery } from '../../db/query.js';
import { changedRows, type GroupChange, type QueueDeps, resolveQueueTarget } from './queue-target.js';

/**
 * Holds an MX group's direct delivery until `until`, from every source IP: the shaper refuses new
 * connections and messages to it as it does after a "slow down" reply, and mail waits in the outbox.
 * The back-off level is left as it is: a hand-made pause says nothing about the remote's patience.
 */
export async function suspendGroup(deps: QueueDeps, target: string, until: Date): Promise<GroupChange> {
  if (until.getTime() <= deps.clock().getTime()) throw validationError('until: must be in the future');
  const resolved = await resolveQueueTarget(deps, target);
  const rows = await sqlQuery<{ source_ip: string }>(
    deps.orm.em.fork(),
    'UPDATE shaping_state SET suspended_until = ? WHERE mx_group = ? RETURNING source_ip',
    [until, resolved.group],
    'postlane_queue_suspend',
  );
  return changedRows(resolved, rows, until.toISOString());
}
