import type { Deps } from '../../deps.js';
import { nextUtcMonth, utcMonth } from './periods.js';
import { readUsage } from './read-usage.js';
import { type TeamPlan, teamPlan } from './team-quota.js';

export interface TeamUsage {
  plan: TeamPlan | null;
  acceptedToday: number;
  /** Monthly plans: the calendar month (UTC) being counted. */
  period: { emailsSent: number; startsAt: Date; endsAt: Date } | null;
}

export async function getUsage(deps: Pick<Deps, 'orm' | 'config' | 'clock'>, teamId: string): Promise<TeamUsage> {
  const now = deps.clock();
  const [plan, usage] = await Promise.all([teamPlan(deps, teamId), readUsage(deps, teamId, now)]);
  return {
    plan,
    acceptedToday: usage.today,
    period:
      plan?.plan.quota === 'monthly'
        ? { emailsSent: usage.thisMonth, startsAt: utcMonth(now), endsAt: nextUtcMonth(now) }
        : null,
  };
}
