import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';

/** Direct delivery's state for one source IP and one MX group, as an operator reads it (`postlane queue`). */
export interface QueueRow {
  mx_group: string;
  source_ip: string;
  profile: string;
  /** Connections open now: leases not yet expired, on any worker host. */
  connections: number;
  deferrals: number;
  connection_failures: number;
  suspensions: number;
  /** Null when the group is not suspended (or its suspension has passed). */
  suspended_until: string | null;
  backoff_level: number;
  /** The last "slow down" reply or connection failure (code and class, never a reply's text), and when. */
  last_reply: string | null;
  last_reply_at: string | null;
}

/** A row as the query reads it: times as dates, the last reply under its column's name. */
type StateRow = Omit<QueueRow, 'suspended_until' | 'last_reply' | 'last_reply_at'> & {
  suspended_until: Date | null;
  last_deferral: string | null;
  last_deferral_at: Date | null;
};

/**
 * The rows a listing reads, a group's source IPs together: the groups suspended now first (the
 * latest suspension end first), then those with the most deferrals and connection failures, so
 * what needs looking at comes before the groups that are merely known.
 */
const LIST_QUEUE = `
  SELECT s.mx_group, s.source_ip, s.profile,
    (SELECT count(*)::int FROM jsonb_each(s.leases) WHERE value::bigint > ?::bigint) AS connections,
    s.deferrals, s.connection_failures, s.suspensions, s.backoff_level, s.last_deferral, s.last_deferral_at,
    CASE WHEN s.suspended_until > ?::timestamptz THEN s.suspended_until END AS suspended_until
  FROM shaping_state s
  WHERE (?::text IS NULL OR s.mx_group = ?::text) AND (NOT ?::boolean OR s.suspended_until > ?::timestamptz)
  ORDER BY max(CASE WHEN s.suspended_until > ?::timestamptz THEN s.suspended_until END)
      OVER (PARTITION BY s.mx_group) DESC NULLS LAST,
    sum(s.deferrals + s.connection_failures) OVER (PARTITION BY s.mx_group) DESC, s.mx_group, s.source_ip
  LIMIT ?`;

export interface ListQueueInput {
  /** Only this MX group's rows. */
  group?: string;
  /** Only rows suspended now. */
  suspendedOnly?: boolean;
  limit?: number;
}

/** Every (source IP, MX group) the shaper has state for, as it stands at the clock's now. */
export async function listQueue(
  deps: { orm: MikroORM; clock: () => Date },
  { group, suspendedOnly = false, limit = 1000 }: ListQueueInput = {},
): Promise<QueueRow[]> {
  const now = deps.clock();
  const rows = await sqlQuery<StateRow>(
    deps.orm.em.fork(),
    LIST_QUEUE,
    [now.getTime(), now, group ?? null, group ?? null, suspendedOnly, now, now, limit],
    'postlane_queue_list',
  );
  return rows.map(presentQueueRow);
}

const iso = (at: Date | null) => (at ? new Date(at).toISOString() : null);

function presentQueueRow(row: StateRow): QueueRow {
  return {
    mx_group: row.mx_group,
    source_ip: row.source_ip,
    profile: row.profile,
    connections: row.connections,
    deferrals: row.deferrals,
    connection_failures: row.connection_failures,
    suspensions: row.suspensions,
    suspended_until: iso(row.suspended_until),
    backoff_level: row.backoff_level,
    last_reply: row.last_deferral,
    last_reply_at: iso(row.last_deferral_at),
  };
}
