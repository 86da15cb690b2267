import type { Deps } from '../../deps.js';
import { getUsage, type TeamUsage } from './get-usage.js';
import { isoDate, utcDay } from './periods.js';

export interface UsageDay {
  day: string;
  accepted: number;
  delivered: number;
  bounced: number;
  complained: number;
}

// Accepted from the usage counters; outcomes from the team's events, by UTC day.
const DAILY_REPORT = `
  SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
         coalesce((SELECT sum(u.accepted) FROM team_daily_usage u WHERE u.team_id = ? AND u.day = d.day), 0)::int AS accepted,
         count(e.id) FILTER (WHERE e.type = 'email.delivered')::int AS delivered,
         count(e.id) FILTER (WHERE e.type = 'email.bounced')::int AS bounced,
         count(e.id) FILTER (WHERE e.type = 'email.complained')::int AS complained
    FROM generate_series(?::date, ?::date, interval '1 day') AS d(day)
    LEFT JOIN event e ON e.team_id = ? AND e.created_at >= d.day AND e.created_at < d.day + interval '1 day'
                     AND e.type IN ('email.delivered', 'email.bounced', 'email.complained')
   GROUP BY d.day ORDER BY d.day`;

/** What `postlane usage` shows: the plan and period, and the last `days` UTC days, today last. */
export async function usageReport(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  teamId: string,
  days: number,
): Promise<TeamUsage & { days: UsageDay[] }> {
  const today = utcDay(deps.clock());
  const first = new Date(today.getTime() - (days - 1) * 86_400_000);
  const rows = await deps.orm.em
    .getConnection()
    .execute<UsageDay[]>(DAILY_REPORT, [teamId, isoDate(first), isoDate(today), teamId]);
  return { ...(await getUsage(deps, teamId)), days: rows };
}
