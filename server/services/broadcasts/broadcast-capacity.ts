import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { broadcastTooLarge } from '../../errors.js';
import { teamPlan } from '../usage/team-quota.js';
import { nextUtcDay, nextUtcMonth } from '../usage/periods.js';
import { readUsage } from '../usage/read-usage.js';

const DAY_MS = 86_400_000;
/** "Capacity available now": what goes out within this long. Beyond it, the answer carries a warning. */
export const CAPACITY_NOW_SECONDS = 3600;
/** An audience needing more than this much capacity is refused. */
export const MAX_BROADCAST_DAYS = 24;

export interface BroadcastEstimate {
  finishesAt: Date;
  warning: { code: 'paced' | 'queued_behind'; days: number; message: string } | null;
}

/** The rate the region's provider is configured for (`rate_per_second` in POSTLANE_PROVIDERS). */
export function regionRate(config: Deps['config'], region: string): number {
  const provider = config.POSTLANE_PROVIDERS.find((p) => p.regions.includes(region));
  return provider?.rate_per_second ?? 1;
}

/**
 * When the last email of a broadcast should go out. The model (docs/templates.md, "Broadcasts"):
 *
 * - the region sends at its provider's `rate_per_second`, one broadcast at a time, oldest first,
 *   so the contacts still owed by broadcasts ahead in the region delay the start;
 * - in cloud mode the team's quota caps each day (daily plans: 150% today, the plan's quota on
 *   each following day) or the month (monthly plans without overage: the rest waits for renewal).
 *
 * `remaining` is this broadcast's contacts still to go; `startAt` its earliest start.
 */
export async function estimateBroadcast(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  broadcast: { id: string; teamId: string; region: string; startAt: Date; queuedSince: Date | null },
  remaining: number,
): Promise<BroadcastEstimate> {
  const now = deps.clock();
  const rate = regionRate(deps.config, broadcast.region);
  const [ahead] = await sqlQuery<{ contacts: string }>(
    deps.orm.em,
    `SELECT coalesce(sum(greatest(coalesce(audience_size, 0) - expanded_count, 0)), 0) AS contacts FROM broadcast
      WHERE region = ? AND status IN ('queued', 'sending') AND id <> ? AND (?::timestamptz IS NULL OR sent_at < ?::timestamptz)
        -- One parked by its quota waits for a time of its own and goes after us.
        AND NOT (status = 'queued' AND coalesce(next_batch_at, '-infinity') > now())`,
    [broadcast.region, broadcast.id, broadcast.queuedSince, broadcast.queuedSince],
  );
  const start = Math.max(now.getTime(), broadcast.startAt.getTime());
  const aheadMs = (Number(ahead!.contacts) / rate) * 1000;
  const ownMs = (remaining / rate) * 1000;
  const byRate = start + aheadMs + ownMs;
  const byQuota = await quotaFinish(deps, broadcast.teamId, now, remaining, rate);
  const finishesAt = new Date(Math.max(byRate, byQuota ?? 0));
  const days = (finishesAt.getTime() - now.getTime()) / DAY_MS;
  if (days > MAX_BROADCAST_DAYS) throw broadcastTooLarge(days, MAX_BROADCAST_DAYS);
  if (finishesAt.getTime() - start <= CAPACITY_NOW_SECONDS * 1000) return { finishesAt, warning: null };
  const rounded = Math.max(0.1, Math.round(days * 10) / 10);
  const behind = aheadMs > ownMs && byRate >= (byQuota ?? 0);
  return {
    finishesAt,
    warning: behind
      ? {
          code: 'queued_behind',
          days: rounded,
          message: `Broadcasts queued ahead in ${broadcast.region} go first; this one should finish in about ${rounded} days.`,
        }
      : {
          code: 'paced',
          days: rounded,
          message: `The audience exceeds the capacity available now (provider rate and quota); it goes out paced and should finish in about ${rounded} days.`,
        },
  };
}

/** The earliest the quota lets `remaining` emails out, or null when it does not hold them back. */
async function quotaFinish(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  now: Date,
  remaining: number,
  rate: number,
): Promise<number | null> {
  const plan = await teamPlan(deps, teamId);
  if (!plan) return null;
  const usage = await readUsage(deps, teamId, now);
  const tail = (count: number) => (count / rate) * 1000;
  if (plan.plan.quota === 'daily') {
    const perDay = plan.plan.emails_per_day;
    const today = Math.max(0, Math.floor(perDay * 1.5) - usage.today);
    if (remaining <= today) return null;
    const rest = remaining - today;
    const fullDays = Math.ceil(rest / perDay) - 1;
    return nextUtcDay(now).getTime() + fullDays * DAY_MS + tail(rest - fullDays * perDay);
  }
  if (plan.overageEnabled) return null;
  const left = Math.max(0, plan.plan.emails_per_month - usage.thisMonth);
  if (remaining <= left) return null;
  // Beyond one more month it is past the 24-day limit anyway.
  return (
    nextUtcMonth(now).getTime() +
    tail(remaining - left) +
    (remaining - left > plan.plan.emails_per_month ? 31 * DAY_MS : 0)
  );
}
