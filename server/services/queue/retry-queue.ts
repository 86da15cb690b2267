import { makeDeferredMailDue } from './deferred-mail.js';
import { type QueueMailDeps, type QueueTarget, resolveQueueTarget } from './queue-target.js';
import { liftSuspension } from './resume-group.js';

/** What `postlane queue retry` did. */
export interface QueueRetry extends QueueTarget {
  /** The source IPs whose suspension or back-off for the group was cleared (none when it had no state). */
  source_ips: string[];
  /** Deferred emails now due. */
  emails: number;
}

/**
 * Tries a group's or a domain's deferred mail now: the group's suspension and back-off are cleared
 * (a retry the shaper refuses at once would only defer it again), and the mail of the group, or of
 * the domain alone when a domain was named, is due now. A group with no shaping state is no error
 * here, as it is for resume: its mail is retried all the same.
 */
export async function retryQueue(deps: QueueMailDeps, target: string): Promise<QueueRetry> {
  const resolved = await resolveQueueTarget(deps, target);
  const em = deps.orm.em.fork();
  const rows = await liftSuspension(deps, em, resolved.group);
  const emails = await makeDeferredMailDue(
    deps,
    em,
    resolved.domain
      ? { column: 'deferred_domains', value: resolved.domain }
      : { column: 'deferred_groups', value: resolved.group },
  );
  return { ...resolved, source_ips: rows.map((row) => row.source_ip).sort(), emails };
}
