import { preparedQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { isoDate, nextUtcDay, utcMonth } from './periods.js';

export interface UsageNow {
  /** Accepted for today, including mail parked yesterday and released today. */
  today: number;
  /** Parked until the next UTC midnight. */
  parkedForTomorrow: number;
  /** Accepted since the first of this calendar month (UTC). */
  thisMonth: number;
}

const READ_USAGE = `
  SELECT coalesce(sum(accepted) FILTER (WHERE day = ?::date), 0)::int AS today,
         coalesce(sum(parked) FILTER (WHERE day = ?::date), 0)::int AS parked_for_tomorrow,
         coalesce(sum(accepted) FILTER (WHERE day <= ?::date), 0)::int AS this_month
    FROM team_daily_usage WHERE team_id = ? AND day >= ?::date`;

/** One indexed read of a few rows (the month's days, each in a few shards). */
export async function readUsage(deps: Pick<Deps, 'orm'>, teamId: string, now: Date): Promise<UsageNow> {
  const today = isoDate(now);
  const [row] = await preparedQuery<{ today: number; parked_for_tomorrow: number; this_month: number }>(
    deps.orm,
    'postlane_read_usage',
    READ_USAGE,
    [today, isoDate(nextUtcDay(now)), today, teamId, isoDate(utcMonth(now))],
  );
  return { today: row!.today, parkedForTomorrow: row!.parked_for_tomorrow, thisMonth: row!.this_month };
}
