import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { ConnectionLease, NotNow, ShapedReply, Shaper, ShapingKey } from './shaper.js';
import type { ShapingProfiles } from './shaping-profiles.js';
import { maskAddresses } from '../../logger.js';

/**
 * How long a lease outlives the last sign of its connection: its opening, a message let through on
 * it, or its host's renewal every LEASE_RENEWAL_MS while it is open (a message may take RFC 5321's
 * 10 minutes to the end of DATA, §4.5.3.2.6, with no grant meanwhile). A dead host's leases lapse
 * by themselves within this, and its slots are the other hosts' again.
 */
export const LEASE_MS = 60_000;
export const LEASE_RENEWAL_MS = 15_000;
/**
 * The first suspension unless configured (POSTLANE_SHAPING_BACKOFF_SECONDS); each further one
 * without recovery in between doubles it, up to the cap.
 */
export const BACKOFF_BASE_MS = 60_000;
export const BACKOFF_CAP_MS = 60 * 60_000;
/** Levels past the one that reaches the cap change nothing. */
const maxBackoffLevel = (baseMs: number) => Math.ceil(Math.log2(BACKOFF_CAP_MS / baseMs)) + 1;
/** This many connection failures within the window suspend the group like a "slow down" reply. */
export const FAILURE_BURST = 3;
export const FAILURE_WINDOW_MS = 60_000;
/**
 * With every connection slot taken, when to ask again: a slot frees when a connection closes,
 * which no bucket predicts, so the answer is a short wait rather than the leases' expiry.
 */
export const CONNECTION_RECHECK_MS = 1000;
/** A host refused a connection counts as waiting for one this long: it asks again within CONNECTION_RECHECK_MS. */
const WAITING_MS = 2 * CONNECTION_RECHECK_MS;

export interface PgShaperDeps {
  orm: MikroORM;
  clock: () => Date;
  profiles: ShapingProfiles;
  /** The first suspension; BACKOFF_BASE_MS when not given. */
  backoffBaseMs?: number;
}

/**
 * Messages let through a statement at once for a connection: one statement per so many messages
 * rather than per message. Another host's suspension of the group therefore reaches a connection
 * at most this many messages late (this host's own at once: `recordReply` forfeits what is left).
 */
export const PERMITS_PER_GRANT = 10;

/** The messages granted to one lease and not yet sent, and the buckets' due times after that grant (epoch ms). */
interface Permits {
  left: number;
  /** Granted over the lease's life: a grant never takes more than the connection may still carry. */
  taken: number;
  messageDue: number | null;
  hourDue: number | null;
}

/** The key's row as a refusal explains itself from it; times in epoch milliseconds. */
interface StateRow {
  granted: boolean;
  /** Messages granted (TAKE_MESSAGES). */
  permits?: number;
  suspended_until: number | null;
  last_deferral: string | null;
  connection_due: number | null;
  message_due: number | null;
  hour_due: number | null;
  leases: Record<string, number>;
  /** Hosts refused a connection lately: host id → until when it counts as waiting (epoch ms). */
  waiting: Record<string, number>;
  backoff_level: number;
}

/**
 * A rate as GCRA in SQL: a due time in `column` that each unit let through moves `step` on (from
 * now when it lies in the past); a unit passes while the due time stays within one `period` of
 * now, so at most a period's worth pass at once and then one per step. A null step is no limit.
 */
function bucket(column: string, step: string, period: string) {
  return {
    allows: `(p.${step} IS NULL OR greatest(s.${column}, p.now) + p.${step} <= p.now + interval '${period}')`,
    spend: `CASE WHEN p.${step} IS NULL THEN s.${column} ELSE greatest(s.${column}, p.now) + p.${step} END`,
  };
}
const connectionRate = bucket('connection_due', 'connection_step', '1 minute');

const KEY_MATCHES = 's.source_ip = p.source_ip AND s.mx_group = p.mx_group';
const NOT_SUSPENDED = '(s.suspended_until IS NULL OR s.suspended_until <= p.now)';
const LIVE_LEASES = 'jsonb_each(s.leases) WHERE value::bigint > p.now_ms';
const epochMs = (column: string) => `extract(epoch FROM s.${column})::float8 * 1000 AS ${column}`;
const STATE_COLUMNS = [
  epochMs('suspended_until'),
  's.last_deferral',
  epochMs('connection_due'),
  epochMs('message_due'),
  epochMs('hour_due'),
  's.leases',
  's.waiting',
  's.backoff_level',
].join(', ');

/** Lease ids are `<host id>:<n>`, so a host's own leases can be told from the others'. */
const OWN_LIVE_LEASES = `(SELECT count(*) FROM ${LIVE_LEASES} AND key LIKE p.host || ':%')`;
const OTHERS_WAITING = `(SELECT count(*) FROM jsonb_each(s.waiting) WHERE key <> p.host AND value::bigint > p.now_ms)`;
/** The other hosts still waiting: this host's own mark is dropped on a grant, set afresh on a refusal. */
const OTHERS_STILL_WAITING = `(SELECT coalesce(jsonb_object_agg(key, value), '{}'::jsonb) FROM jsonb_each(s.waiting) WHERE key <> p.host AND value::bigint > p.now_ms)`;

/**
 * A connection in one statement: the UPDATE takes a slot only when the rate allows, a slot is
 * free and this host holds fewer than its share, on the row's newest version with its lock held
 * for that statement alone (READ COMMITTED re-checks the condition after waiting for a concurrent
 * writer), so no two hosts take the same slot. A host's share is the slots divided among it and
 * the other hosts refused lately: a host that frees a slot would otherwise take it again at once,
 * before a host asking once a second ever saw it free. Refused, the same statement notes this
 * host as waiting and reads the row to say why and until when. No row: the key is new.
 */
const OPEN_CONNECTION = `
  WITH p AS (SELECT ?::text AS source_ip, ?::text AS mx_group, ?::text AS profile, ?::timestamptz AS now,
    ?::bigint AS now_ms, ?::int AS connections, ?::float8 * interval '1 millisecond' AS connection_step,
    ?::text AS host, ?::text AS lease_id, ?::bigint AS lease_expires_ms, ?::bigint AS waiting_until_ms),
  granted AS (
    UPDATE shaping_state s SET profile = p.profile, connection_due = ${connectionRate.spend},
      leases = (SELECT coalesce(jsonb_object_agg(key, value), '{}'::jsonb) FROM ${LIVE_LEASES})
        || jsonb_build_object(p.lease_id, p.lease_expires_ms),
      waiting = ${OTHERS_STILL_WAITING}
    FROM p WHERE ${KEY_MATCHES} AND ${NOT_SUSPENDED} AND ${connectionRate.allows}
      AND (SELECT count(*) FROM ${LIVE_LEASES}) < p.connections
      AND ${OWN_LIVE_LEASES} < ceil(p.connections::numeric / (1 + ${OTHERS_WAITING}))
    RETURNING ${STATE_COLUMNS}
  ),
  refused AS (
    UPDATE shaping_state s SET waiting = ${OTHERS_STILL_WAITING} || jsonb_build_object(p.host, p.waiting_until_ms)
    FROM p WHERE ${KEY_MATCHES} AND NOT EXISTS (SELECT FROM granted)
    RETURNING ${STATE_COLUMNS}
  )
  SELECT true AS granted, * FROM granted
  UNION ALL
  SELECT false, * FROM refused`;

/** How many messages a bucket of `step` (milliseconds a unit, `p.<step>_ms`) has room for now in its `period`; null step, all wanted. */
const roomIn = (column: string, step: string, period: string) =>
  `CASE WHEN p.${step}_ms IS NULL THEN p.wanted
   ELSE floor(extract(epoch FROM p.now + interval '${period}' - greatest(s.${column}, p.now)) * 1000 / p.${step}_ms + 1e-9)::int END`;
const spendOn = (column: string, step: string) =>
  `CASE WHEN p.${step}_ms IS NULL THEN s.${column}
   ELSE greatest(s.${column}, p.now) + l.permits * p.${step}_ms * interval '1 millisecond' END`;

/**
 * Messages let through: as many of `wanted` as both rate buckets have room for now, at least one,
 * spent at once. The row is locked first (FOR UPDATE re-reads its newest version after waiting for
 * a concurrent writer, as READ COMMITTED does), so the count is decided on the state the UPDATE
 * writes over and no two hosts spend the same unit; the lock ends with the statement. A grant also
 * renews this host's leases on the key: a connection in use is alive.
 */
const TAKE_MESSAGES = `
  WITH p AS (SELECT ?::text AS source_ip, ?::text AS mx_group, ?::text AS profile, ?::timestamptz AS now,
    ?::bigint AS now_ms, ?::float8 AS message_step_ms, ?::float8 AS hour_step_ms, ?::jsonb AS held,
    ?::bigint AS lease_expires_ms, ?::int AS wanted),
  l AS MATERIALIZED (
    SELECT s.source_ip, s.mx_group,
           least(p.wanted, ${roomIn('message_due', 'message_step', '1 second')}, ${roomIn('hour_due', 'hour_step', '1 hour')}) AS permits
      FROM shaping_state s JOIN p ON ${KEY_MATCHES} WHERE ${NOT_SUSPENDED}
       FOR UPDATE OF s
  ),
  granted AS (
    UPDATE shaping_state s SET message_due = ${spendOn('message_due', 'message_step')},
      hour_due = ${spendOn('hour_due', 'hour_step')},
      leases = s.leases || (SELECT coalesce(jsonb_object_agg(key, p.lease_expires_ms), '{}'::jsonb) FROM ${LIVE_LEASES}
        AND key IN (SELECT jsonb_array_elements_text(p.held)))
    FROM p, l WHERE ${KEY_MATCHES} AND s.source_ip = l.source_ip AND s.mx_group = l.mx_group AND l.permits >= 1
    RETURNING l.permits, ${STATE_COLUMNS}
  )
  SELECT true AS granted, * FROM granted
  UNION ALL
  SELECT false, 0, ${STATE_COLUMNS} FROM shaping_state s JOIN p ON ${KEY_MATCHES} WHERE NOT EXISTS (SELECT FROM granted)`;

/** This host's open leases renewed, each while still live (a lapsed one's slot may be another host's by now). */
const RENEW_LEASES = `
  WITH p AS (SELECT ?::bigint AS now_ms, ?::bigint AS lease_expires_ms, ?::jsonb AS held)
  UPDATE shaping_state s SET leases = s.leases || (SELECT coalesce(jsonb_object_agg(key, p.lease_expires_ms), '{}'::jsonb)
    FROM ${LIVE_LEASES} AND key IN (SELECT jsonb_array_elements_text(h.ids)))
  FROM p, jsonb_to_recordset(p.held) AS h(source_ip text, mx_group text, ids jsonb)
  WHERE s.source_ip = h.source_ip AND s.mx_group = h.mx_group`;

/**
 * A connection's lease given back, and with it the messages granted for the connection that it did
 * not carry: each bucket moves back by them, but only while the grant's own due time (`p.<bucket>_granted`)
 * is still ahead, so what is given back is capacity not yet come due, never credit from the past.
 */
const giveBack = (column: string, step: string) =>
  `CASE WHEN p.unused > 0 AND p.${step}_ms IS NOT NULL AND p.now_ms < p.${column}_granted
   THEN greatest(s.${column} - p.unused * p.${step}_ms * interval '1 millisecond', p.now) ELSE s.${column} END`;
const RELEASE = `
  WITH p AS (SELECT ?::text AS lease_id, ?::text AS source_ip, ?::text AS mx_group, ?::timestamptz AS now,
    ?::bigint AS now_ms, ?::int AS unused, ?::float8 AS message_step_ms, ?::float8 AS hour_step_ms,
    ?::float8 AS message_due_granted, ?::float8 AS hour_due_granted)
  UPDATE shaping_state s SET leases = s.leases - p.lease_id,
    message_due = ${giveBack('message_due', 'message_step')}, hour_due = ${giveBack('hour_due', 'hour_step')}
  FROM p WHERE ${KEY_MATCHES}`;

const ENSURE_ROW = `INSERT INTO shaping_state (source_ip, mx_group, profile) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`;

/** The suspension a level stands for: the base (`p.backoff_base_ms`) doubled per level above the first, capped. */
const suspensionFor = (level: string) =>
  `least(p.backoff_base_ms * power(2, ${level} - 1), ${BACKOFF_CAP_MS}) * interval '1 millisecond'`;
const RECENT_FAILURES = `((SELECT coalesce(jsonb_agg(t), '[]'::jsonb) FROM jsonb_array_elements(s.recent_failures) t
  WHERE t::bigint > p.now_ms - ${FAILURE_WINDOW_MS}) || to_jsonb(p.now_ms))`;
const SUSPENDS = `(${NOT_SUSPENDED} AND (p.slowdown OR (p.failure AND jsonb_array_length(${RECENT_FAILURES}) >= ${FAILURE_BURST})))`;
const RAISED_LEVEL = 'least(s.backoff_level + 1, p.max_backoff_level)';

/**
 * A "slow down" reply or a connection failure. Not yet suspended, a slow-down (or the failure that
 * completes a burst) suspends the key one level longer than last time; while suspended, the
 * replies of connections already under way are counted but do not lengthen it again.
 */
const RECORD_DEFERRAL = `
  WITH p AS (SELECT ?::text AS source_ip, ?::text AS mx_group, ?::timestamptz AS now, ?::bigint AS now_ms,
    ?::boolean AS slowdown, ?::boolean AS failure, ?::text AS reply, ?::float8 AS backoff_base_ms,
    ?::int AS max_backoff_level)
  UPDATE shaping_state s SET
    recent_failures = CASE WHEN ${SUSPENDS} THEN '[]'::jsonb WHEN p.failure THEN ${RECENT_FAILURES} ELSE s.recent_failures END,
    backoff_level = CASE WHEN ${SUSPENDS} THEN ${RAISED_LEVEL} ELSE s.backoff_level END,
    backoff_changed_at = CASE WHEN ${SUSPENDS} THEN p.now ELSE s.backoff_changed_at END,
    suspended_until = CASE WHEN ${SUSPENDS} THEN p.now + ${suspensionFor(RAISED_LEVEL)} ELSE s.suspended_until END,
    suspensions = s.suspensions + CASE WHEN ${SUSPENDS} THEN 1 ELSE 0 END,
    deferrals = s.deferrals + CASE WHEN p.slowdown THEN 1 ELSE 0 END,
    connection_failures = s.connection_failures + CASE WHEN p.failure THEN 1 ELSE 0 END,
    last_deferral = p.reply,
    last_deferral_at = p.now
  FROM p WHERE ${KEY_MATCHES}
  RETURNING s.backoff_level`;

/**
 * A delivery lowers the back-off one level once the level has stood twice its suspension (the
 * suspension, then as long again of sending without a "slow down"): recovery is gradual, and a
 * group that throttles again soon after resuming is suspended longer than before.
 */
const RECORD_DELIVERY = `
  WITH p AS (SELECT ?::text AS source_ip, ?::text AS mx_group, ?::timestamptz AS now, ?::float8 AS backoff_base_ms)
  UPDATE shaping_state s SET backoff_level = s.backoff_level - 1, backoff_changed_at = p.now
  FROM p WHERE ${KEY_MATCHES} AND s.backoff_level > 0 AND ${NOT_SUSPENDED}
    AND s.backoff_changed_at + 2 * ${suspensionFor('s.backoff_level')} <= p.now
  RETURNING s.backoff_level`;

/** What a reply means to the back-off. */
function replyEffect(reply: ShapedReply): 'slowdown' | 'failure' | 'delivered' | null {
  if (reply.kind === 'connection_failed') return 'failure';
  if (reply.code >= 200 && reply.code < 300) return 'delivered';
  // A rate limit or a policy or reputation block, temporary or not, is about the sending IP: the
  // group backs off (a permanent one also fails its message, but never suppresses the address).
  return reply.backoff ? 'slowdown' : null;
}

/** The code and class of a reply, or why a connection failed: never a reply's text, which may name a recipient. */
const describeReply = (reply: ShapedReply) =>
  (reply.kind === 'connection_failed'
    ? `connection failed: ${maskAddresses(reply.reason)}`
    : `${reply.code} ${reply.class}${reply.permanent ? '' : ' (temporary)'}`
  ).slice(0, 500);

const keyId = (key: ShapingKey) => `${key.sourceIp} ${key.group}`;

/** The milliseconds one unit of a rate of `perPeriod` a `periodMs` takes to come back; null for no limit. */
const stepOf = (perPeriod: number | null, periodMs: number) => (perPeriod === null ? null : periodMs / perPeriod);

/** When a GCRA bucket of `perPeriod` a `periodMs` lets the next unit through, if later than `now`. */
function bucketOpensAt(due: number | null, perPeriod: number | null, periodMs: number, now: number): number | null {
  const step = stepOf(perPeriod, periodMs);
  if (step === null || due === null) return null;
  // Microseconds from the due time are no use to a caller that waits in milliseconds.
  const at = Math.ceil(due + step - periodMs);
  return at > now ? at : null;
}

type Wait = { at: number; reason: string; suspended?: true };

/** The latest of the reasons that hold: the caller may go ahead only once all have passed. */
function notNow(now: number, waits: (Wait | null)[]): NotNow {
  const latest = waits.reduce<Wait | null>(
    (found, wait) => (wait && (!found || wait.at > found.at) ? wait : found),
    null,
  );
  // Nothing holds any more: another host spent and gave back in between. Ask again at once.
  return latest
    ? { retryAt: new Date(latest.at), reason: latest.reason, ...(latest.suspended && { suspended: true }) }
    : { retryAt: new Date(now), reason: 'contended: ask again' };
}

function suspension(row: StateRow, now: number) {
  const until = row.suspended_until ?? 0;
  if (until <= now) return null;
  const cause = row.last_deferral ? ` after ${row.last_deferral}` : '';
  return { at: until, reason: `suspended until ${new Date(until).toISOString()}${cause}`, suspended: true as const };
}

/**
 * The Shaper held in PostgreSQL: one row per source IP and MX group (shaping_state) that every
 * worker host decides against, each decision one short statement. Time is the injected clock's;
 * the hosts' clocks are assumed synchronised (NTP), as the due times compare across them.
 */
export class PgShaper implements Shaper {
  /**
   * Statements run outside any caller's transaction, on a context of their own: a decision's row
   * lock must end with its statement, never be held until somebody else's commit.
   */
  private readonly em: EntityManager;
  /** This host's open leases per key, renewed as their connections carry messages and every LEASE_RENEWAL_MS, with their messages granted. */
  private readonly held = new Map<string, { key: ShapingKey; leases: Map<string, Permits> }>();
  private renewal: NodeJS.Timeout | null = null;
  private readonly leasePermits = new WeakMap<ConnectionLease, Permits>();
  /**
   * The keys whose back-off was raised when this host last looked (each decision tells): only their
   * deliveries can lower it, so the others' cost no statement.
   */
  private readonly backedOff = new Set<string>();
  private readonly backoffBaseMs: number;

  /** This process among the worker hosts: its lease ids begin with it. */
  private readonly hostId = randomUUID();
  private leasesOpened = 0;

  constructor(private readonly deps: PgShaperDeps) {
    this.em = deps.orm.em.fork({ disableContextResolution: true });
    this.backoffBaseMs = deps.backoffBaseMs ?? BACKOFF_BASE_MS;
  }

  async openConnection(key: ShapingKey): Promise<ConnectionLease | NotNow> {
    const profile = this.deps.profiles.byName(key.profile);
    const now = this.deps.clock().getTime();
    this.leasesOpened += 1;
    const leaseId = `${this.hostId}:${this.leasesOpened}`;
    const row = await this.decide(key, 'postlane_shaper_open_connection', OPEN_CONNECTION, now, [
      profile.connections,
      stepOf(profile.connectionsPerMinute, 60_000),
      this.hostId,
      leaseId,
      now + LEASE_MS,
      now + WAITING_MS,
    ]);
    if (!row.granted) {
      const live = Object.entries(row.leases).filter(([, expiry]) => expiry > now);
      const own = live.filter(([id]) => id.startsWith(`${this.hostId}:`)).length;
      const othersWaiting = Object.entries(row.waiting).filter(([host, until]) => host !== this.hostId && until > now);
      const share = Math.ceil(profile.connections / (1 + othersWaiting.length));
      const full =
        live.length >= profile.connections
          ? {
              at: Math.min(now + CONNECTION_RECHECK_MS, ...live.map(([, expiry]) => expiry)),
              reason: `${live.length} connections open, the limit is ${profile.connections}`,
            }
          : own >= share
            ? {
                at: now + CONNECTION_RECHECK_MS,
                reason: `${own} connections open on this host, its share while ${othersWaiting.length} more hosts wait`,
              }
            : null;
      const opensAt = bucketOpensAt(row.connection_due, profile.connectionsPerMinute, 60_000, now);
      return notNow(now, [
        suspension(row, now),
        full,
        opensAt ? { at: opensAt, reason: `new connections limited to ${profile.connectionsPerMinute} a minute` } : null,
      ]);
    }
    const held = this.heldFor(key);
    const permits: Permits = { left: 0, taken: 0, messageDue: null, hourDue: null };
    held.set(leaseId, permits);
    // A failed renewal (the database away) leaves the leases to lapse; the next one renews what is still live.
    this.renewal ??= setInterval(() => void this.renewLeases().catch(() => {}), LEASE_RENEWAL_MS).unref();
    let released = false;
    const lease: ConnectionLease = {
      messagesLeft: profile.messagesPerConnection,
      release: async () => {
        if (released) return;
        released = true;
        held.delete(leaseId);
        if (held.size === 0 && this.held.get(keyId(key))?.leases === held) this.held.delete(keyId(key));
        if (this.held.size === 0 && this.renewal) {
          clearInterval(this.renewal);
          this.renewal = null;
        }
        const at = this.deps.clock();
        await sqlQuery(
          this.em,
          RELEASE,
          [
            leaseId,
            key.sourceIp,
            key.group,
            at,
            at.getTime(),
            permits.left,
            stepOf(profile.messagesPerSecond, 1000),
            stepOf(profile.messagesPerHour, 3_600_000),
            permits.messageDue,
            permits.hourDue,
          ],
          'postlane_shaper_release',
        );
      },
    };
    this.leasePermits.set(lease, permits);
    return lease;
  }

  /**
   * One message. On a lease, messages are granted a few at a time (PERMITS_PER_GRANT, never more
   * than the connection may still carry) and kept with it; the lease gives back those it did not
   * use. Without one, a single message.
   */
  async sendMessage(key: ShapingKey, lease?: ConnectionLease): Promise<true | NotNow> {
    const permits = lease && this.leasePermits.get(lease);
    if (permits && permits.left > 0) {
      permits.left -= 1;
      return true;
    }
    const profile = this.deps.profiles.byName(key.profile);
    const now = this.deps.clock().getTime();
    const wanted = permits
      ? Math.max(1, Math.min(PERMITS_PER_GRANT, profile.messagesPerConnection - permits.taken))
      : 1;
    const row = await this.decide(key, 'postlane_shaper_take_messages', TAKE_MESSAGES, now, [
      stepOf(profile.messagesPerSecond, 1000),
      stepOf(profile.messagesPerHour, 3_600_000),
      JSON.stringify([...this.heldOn(key).keys()]),
      now + LEASE_MS,
      wanted,
    ]);
    if (row.granted) {
      const granted = row.permits ?? 1;
      if (permits)
        Object.assign(permits, {
          left: granted - 1,
          taken: permits.taken + granted,
          messageDue: row.message_due,
          hourDue: row.hour_due,
        });
      return true;
    }
    const perSecond = bucketOpensAt(row.message_due, profile.messagesPerSecond, 1000, now);
    const perHour = bucketOpensAt(row.hour_due, profile.messagesPerHour, 3_600_000, now);
    return notNow(now, [
      suspension(row, now),
      perSecond ? { at: perSecond, reason: `messages limited to ${profile.messagesPerSecond} a second` } : null,
      perHour ? { at: perHour, reason: `messages limited to ${profile.messagesPerHour} an hour` } : null,
    ]);
  }

  async recordReply(key: ShapingKey, reply: ShapedReply): Promise<void> {
    const effect = replyEffect(reply);
    if (effect === null) return;
    const now = this.deps.clock();
    if (effect === 'delivered') {
      if (!this.backedOff.has(keyId(key))) return;
      const [lowered] = await sqlQuery<{ backoff_level: number }>(
        this.em,
        RECORD_DELIVERY,
        [key.sourceIp, key.group, now, this.backoffBaseMs],
        'postlane_shaper_record_delivery',
      );
      if (lowered) this.noteBackoff(key, lowered.backoff_level);
      return;
    }
    // Told to slow down: this host's connections to the group send nothing more on messages granted before.
    if (effect === 'slowdown') for (const permits of this.heldOn(key).values()) permits.left = 0;
    const params = [
      key.sourceIp,
      key.group,
      now,
      now.getTime(),
      effect === 'slowdown',
      effect === 'failure',
      describeReply(reply),
      this.backoffBaseMs,
      maxBackoffLevel(this.backoffBaseMs),
    ];
    const [row] = await this.withRow(key, () =>
      sqlQuery<{ backoff_level: number }>(this.em, RECORD_DEFERRAL, params, 'postlane_shaper_record_deferral'),
    );
    this.noteBackoff(key, row!.backoff_level);
  }

  private async decide(key: ShapingKey, name: string, sql: string, now: number, params: unknown[]): Promise<StateRow> {
    const rows = await this.withRow(key, () =>
      sqlQuery<StateRow>(this.em, sql, [key.sourceIp, key.group, key.profile, new Date(now), now, ...params], name),
    );
    this.noteBackoff(key, rows[0]!.backoff_level);
    return rows[0]!;
  }

  /** Runs a statement on the key's row, creating the row first when the statement found none. */
  private async withRow<T>(key: ShapingKey, run: () => Promise<T[]>): Promise<T[]> {
    const rows = await run();
    if (rows.length > 0) return rows;
    await sqlQuery(this.em, ENSURE_ROW, [key.sourceIp, key.group, key.profile], 'postlane_shaper_ensure_row');
    return run();
  }

  private noteBackoff(key: ShapingKey, level: number): void {
    if (level > 0) this.backedOff.add(keyId(key));
    else this.backedOff.delete(keyId(key));
  }

  /** This host's leases on the key, none when it holds none. */
  private heldOn(key: ShapingKey): ReadonlyMap<string, Permits> {
    return this.held.get(keyId(key))?.leases ?? new Map();
  }

  private heldFor(key: ShapingKey): Map<string, Permits> {
    const id = keyId(key);
    let held = this.held.get(id);
    if (!held) this.held.set(id, (held = { key, leases: new Map<string, Permits>() }));
    return held.leases;
  }

  /** Renews this host's open leases in one statement: a connection kept open without a message is alive too. */
  async renewLeases(): Promise<void> {
    const held = [...this.held.values()].map(({ key, leases }) => ({
      source_ip: key.sourceIp,
      mx_group: key.group,
      ids: [...leases.keys()],
    }));
    if (held.length === 0) return;
    const now = this.deps.clock().getTime();
    await sqlQuery(this.em, RENEW_LEASES, [now, now + LEASE_MS, JSON.stringify(held)], 'postlane_shaper_renew_leases');
  }
}
