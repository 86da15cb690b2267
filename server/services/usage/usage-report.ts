import type { Deps } from '../../deps.js';
import { getUsage, type TeamUsage } from './get-usage.js';
import { isoDate, utcDay } from './periods.js';

export interface UsageDay {
  day: string;
  accepted: number;
  /** Handed to a provider (the capture provider included, which reports no delivery). */
  sent: number;
  /** Delivered as the provider reported it. */
  delivered: number;
  bounced: number;
  complained: number;
}

// Accepted from the usage counters; outcomes from the hourly email metrics, which outlive the
// emails and their events (retention), summed by UTC day.
const DAILY_REPORT = `
  SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
         coalesce((SELECT sum(u.accepted) FROM team_daily_usage u WHERE u.team_id = ? AND u.day = d.day), 0)::int AS accepted,
         coalesce(sum(m.sent), 0)::int AS sent,
         coalesce(sum(m.delivered), 0)::int AS delivered,
         coalesce(sum(m.bounced_permanent + m.bounced_transient + m.bounced_undetermined), 0)::int AS bounced,
         coalesce(sum(m.complained), 0)::int AS complained
    FROM generate_series(?::date, ?::date, interval '1 day') AS d(day)
    LEFT JOIN email_metrics_hourly m ON m.team_id = ? AND m.hour >= d.day::date::timestamp AT TIME ZONE 'UTC'
                                    AND m.hour < (d.day::date + 1)::timestamp AT TIME ZONE 'UTC'
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
