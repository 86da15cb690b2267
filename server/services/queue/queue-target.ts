import type { MikroORM } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { ApiError } from '../../errors.js';
import { mxGroupKey, resolveRoute } from '../../providers/direct/mx-route.js';

export type QueueDeps = { orm: MikroORM; dns: Pick<DnsResolver, 'query'>; clock: () => Date };
/** What a command that also moves deferred mail needs: a drain run is booked for mail made due. */
export type QueueMailDeps = QueueDeps & Pick<Deps, 'jobs' | 'logger'>;

/** The MX group a command acts on, and how the operator's word was read. */
export interface QueueTarget {
  group: string;
  /** `group`: the word was a group key the shaper knows; `domain`: a recipient domain, looked up in DNS. */
  matched: 'group' | 'domain';
  domain: string | null;
}

/** The operator's word as groups and domains are stored: lower case, without surrounding space. */
export const queueWord = (target: string) => target.trim().toLowerCase();

/** Whether the shaper has state for a group of this key, from any source IP. */
export async function isKnownGroup(deps: { orm: MikroORM }, word: string): Promise<boolean> {
  const known = await deps.orm.em
    .fork()
    .getConnection()
    .execute<{ n: number }[]>('SELECT count(*)::int AS n FROM shaping_state WHERE mx_group = ?', [word]);
  return (known[0]?.n ?? 0) > 0;
}

/**
 * An MX group key as `postlane queue` lists it, or a recipient domain, whose MX records name the
 * group (as direct delivery groups it: every domain served by the same hosts shares one). A known
 * key wins: a group of one host reads like a domain name.
 */
export async function resolveQueueTarget(
  deps: { orm: MikroORM; dns: Pick<DnsResolver, 'query'> },
  target: string,
): Promise<QueueTarget> {
  const word = queueWord(target);
  if (await isKnownGroup(deps, word)) return { group: word, matched: 'group', domain: null };
  // Equal preferences are shuffled for delivery; the group is their sorted set, so any order does.
  const route = await resolveRoute(deps.dns, word, () => 0);
  if (route.kind === 'route') return { group: mxGroupKey(route).key, matched: 'domain', domain: route.domain };
  const why = route.kind === 'refused' ? route.message : `its MX could not be looked up (${route.reason})`;
  throw new ApiError(404, 'not_found', `${target} is no MX group direct delivery has used, and as a domain: ${why}`);
}

/** What suspending or resuming a group changed. */
export interface GroupChange extends QueueTarget {
  /** The source IPs whose row for the group changed: one each. */
  source_ips: string[];
  suspended_until: string | null;
}

export function changedRows(target: QueueTarget, rows: { source_ip: string }[], until: string | null): GroupChange {
  // A domain whose group direct delivery has not sent to yet has no row to hold: say so, not "done".
  if (rows.length === 0)
    throw new ApiError(
      404,
      'not_found',
      `direct delivery has no state for the MX group ${target.group}${target.domain ? ` (of ${target.domain})` : ''} yet`,
    );
  return { ...target, source_ips: rows.map((row) => row.source_ip).sort(), suspended_until: until };
}
