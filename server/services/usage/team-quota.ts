import type { Plan, PlanName } from '../../../config/plans.js';
import { preparedQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { dailyQuotaExceeded, monthlyQuotaExceeded } from '../../errors.js';
import { emitEvent } from '../events/emit-event.js';
import { isoDate, nextUtcDay, nextUtcMonth, secondsUntil, utcDay, utcMonth } from './periods.js';
import { readUsage } from './read-usage.js';

type QuotaDeps = Pick<Deps, 'orm' | 'config' | 'clock'>;

/** Past the daily cap, up to this much more is sent at once; beyond it, mail parks until midnight UTC. */
const DAILY_BURST = 1.5;
const WARNING_SHARE = 0.8;

export interface TeamPlan {
  teamId: string;
  name: PlanName;
  plan: Plan;
  overageEnabled: boolean;
}

/** The team's plan in cloud mode; null on a self-hosted instance, where nothing is capped. */
export async function teamPlan(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  forUpdate = false,
): Promise<TeamPlan | null> {
  if (!deps.config.POSTLANE_CLOUD) return null;
  const [team] = await preparedQuery<{ plan: PlanName | null; overage_enabled: boolean }>(
    deps.orm,
    forUpdate ? 'postlane_team_plan_locked' : 'postlane_team_plan',
    `SELECT plan, overage_enabled FROM team WHERE id = ?${forUpdate ? ' FOR UPDATE' : ''}`,
    [teamId],
  );
  const name = team?.plan ?? 'free';
  return { teamId, name, plan: deps.config.POSTLANE_PLANS[name], overageEnabled: team?.overage_enabled ?? false };
}

/**
 * Runs a send under the team's quota. In cloud mode it is one transaction that holds the team's
 * row, so concurrent sends (in any process) decide one after another and two can never both take
 * the last unit; `admit` then says whether `count` emails go now, park until the given time, or are
 * refused. Self-hosted, nothing is held and everything goes now.
 */
export async function withTeamQuota<T>(
  deps: QuotaDeps,
  teamId: string,
  send: (admit: (count: number) => Promise<Date | null>) => Promise<T>,
): Promise<T> {
  if (!deps.config.POSTLANE_CLOUD) return send(async () => null);
  return deps.orm.em.transactional(async () => {
    const plan = (await teamPlan(deps, teamId, true))!;
    return send((count) => admitUnderPlan(deps, plan, count));
  });
}

async function admitUnderPlan(
  deps: QuotaDeps,
  { teamId, plan, overageEnabled }: TeamPlan,
  count: number,
): Promise<Date | null> {
  if (count === 0) return null;
  const now = deps.clock();
  const usage = await readUsage(deps, teamId, now);
  const dashboardUrl = deps.config.POSTLANE_PUBLIC_URL;
  if (plan.quota === 'daily') {
    const limit = plan.emails_per_day;
    const ceiling = Math.floor(limit * DAILY_BURST);
    const resetsAt = nextUtcDay(now);
    const data = (used: number, resets = resetsAt) => ({
      used,
      limit,
      period: 'day',
      resets_at: resets.toISOString(),
      dashboard_url: dashboardUrl,
      ceiling,
    });
    if (usage.today + count <= ceiling) {
      await noticeCrossings(deps, teamId, utcDay(now), limit, usage.today + count, data(usage.today + count));
      return null;
    }
    // The parked backlog holds one more day of the plan's quota.
    if (usage.parkedForTomorrow + count <= limit) {
      await noticeCrossings(deps, teamId, utcDay(now), limit, Math.max(usage.today, limit), data(usage.today));
      await notice(deps, teamId, 'quota.paused', utcDay(now), data(usage.today));
      // Parked mail is counted here, on the day it is released: that day starts at this usage, so
      // the lines it reaches are crossed at its midnight, and announced then (the event's time
      // is when its webhooks come due), whether or not anyone sends that day.
      const parked = usage.parkedForTomorrow + count;
      await noticeCrossings(deps, teamId, resetsAt, limit, parked, data(parked, nextUtcDay(resetsAt)), resetsAt);
      return resetsAt;
    }
    throw dailyQuotaExceeded(secondsUntil(now, resetsAt));
  }
  const limit = plan.emails_per_month;
  const resetsAt = nextUtcMonth(now);
  const used = usage.thisMonth + count;
  if (used > limit && !overageEnabled) throw monthlyQuotaExceeded(isoDate(resetsAt), secondsUntil(now, resetsAt));
  await noticeCrossings(deps, teamId, utcMonth(now), limit, used, {
    used,
    limit,
    period: 'month',
    resets_at: resetsAt.toISOString(),
    dashboard_url: dashboardUrl,
    overage: overageEnabled,
  });
  return null;
}

/** quota.warning at 80% and quota.reached at the cap, each once per period; `at` is when the usage got there. */
async function noticeCrossings(
  deps: QuotaDeps,
  teamId: string,
  periodStart: Date,
  limit: number,
  used: number,
  data: Record<string, unknown>,
  at = deps.clock(),
) {
  if (used >= limit * WARNING_SHARE) await notice(deps, teamId, 'quota.warning', periodStart, data, at);
  if (used >= limit) await notice(deps, teamId, 'quota.reached', periodStart, data, at);
}

async function notice(
  deps: QuotaDeps,
  teamId: string,
  event: string,
  periodStart: Date,
  data: Record<string, unknown>,
  at = deps.clock(),
) {
  const inserted = await preparedQuery(
    deps.orm,
    'postlane_quota_notice',
    'INSERT INTO quota_notice (team_id, event, period_start) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1',
    [teamId, event, periodStart],
  );
  if (inserted.length > 0) await emitEvent(deps.orm.em, { teamId, type: event, data, createdAt: at });
}
