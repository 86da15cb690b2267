import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { ShapingProfiles } from './shaping-profiles.js';
import type { SourceIdentity } from './source-ips.js';

const DAY_MS = 86_400_000;

/** Messages taken from a warming IP's cap for today: given back when they did not go after all. */
export interface WarmupTicket {
  giveBack(): Promise<void>;
}

/**
 * IP warm-up: a new source IP sends each mailbox provider profile at most its schedule's cap a day,
 * counted across every worker host, until the schedule ends and it graduates.
 */
export interface Warmup {
  /** `count` messages of today's cap for the IP and profile; null when they do not fit today. */
  take(identity: SourceIdentity, profile: string, count: number): Promise<WarmupTicket | null>;
}

/** Day 1 is `warmupFrom`'s; a day before it counts as day 1 (the IP is new either way). */
export const warmupDay = (warmupFrom: Date, now: Date) =>
  Math.max(1, Math.floor((now.getTime() - warmupFrom.getTime()) / DAY_MS) + 1);

/** When today's caps are new: the next midnight UTC. */
export const nextWarmupDay = (now: Date) => new Date(Math.floor(now.getTime() / DAY_MS + 1) * DAY_MS);

/**
 * One statement takes from the day's count: the row is created with the count when it fits the
 * cap, or raised when it still fits; the conflicting insert waits for any concurrent writer's row
 * lock and re-checks the condition on the newest version, so no two hosts spend the same room.
 */
const TAKE = `
  INSERT INTO warmup_count AS w (source_ip, profile, day, sent)
  SELECT ?::text, ?::text, ?::date, ?::int WHERE ?::int <= ?::int
  ON CONFLICT (source_ip, profile, day) DO UPDATE SET sent = w.sent + excluded.sent
    WHERE w.sent + excluded.sent <= ?::int
  RETURNING sent`;

const GIVE_BACK = `UPDATE warmup_count SET sent = greatest(sent - ?::int, 0) WHERE source_ip = ? AND profile = ? AND day = ?::date`;

const NOTHING_TAKEN: WarmupTicket = { giveBack: async () => {} };

/** The warm-up counts in PostgreSQL (warmup_count), one row per IP, profile and UTC day. */
export class PgWarmup implements Warmup {
  /** Outside any caller's transaction, as the Shaper's: the row lock ends with its statement. */
  private readonly em: EntityManager;

  constructor(private readonly deps: { orm: MikroORM; clock: () => Date; profiles: ShapingProfiles }) {
    this.em = deps.orm.em.fork({ disableContextResolution: true });
  }

  async take(identity: SourceIdentity, profile: string, count: number): Promise<WarmupTicket | null> {
    if (!identity.warmupFrom) return NOTHING_TAKEN;
    const now = this.deps.clock();
    const cap = this.deps.profiles.warmupCap(profile, warmupDay(identity.warmupFrom, now));
    if (cap === null) return NOTHING_TAKEN;
    const day = now.toISOString().slice(0, 10);
    const rows = await sqlQuery(
      this.em,
      TAKE,
      [identity.ip, profile, day, count, count, cap, cap],
      'postlane_warmup_take',
    );
    if (rows.length === 0) return null;
    return {
      giveBack: async () => {
        await sqlQuery(this.em, GIVE_BACK, [count, identity.ip, profile, day], 'postlane_warmup_give_back');
      },
    };
  }
}
