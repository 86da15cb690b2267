import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { DeliverabilityMetric } from '../../entities/index.js';
import { type Lines, ratesOf, teamLines, type WindowCounts } from './deliverability-lines.js';
import { teamWindow } from './judge-team.js';

export interface TeamDeliverability {
  windowDays: number;
  minVolume: number;
  counts: WindowCounts;
  /** Null below the minimum volume. */
  rates: Record<DeliverabilityMetric, number | null>;
  lines: Record<DeliverabilityMetric, Lines>;
  episodes: { metric: DeliverabilityMetric; warnedAt: Date; pausedAt: Date | null; liftedUntil: Date | null }[];
  /** Regions whose broadcasts are paused platform-wide (they hold this team's broadcasts there too). */
  regionsPaused: string[];
}

/** What an operator reads about a team's deliverability (`postlane teams show`). */
export async function teamDeliverability(
  deps: Pick<Deps, 'config'>,
  em: EntityManager,
  teamId: string,
  now: Date,
): Promise<TeamDeliverability> {
  const counts = await teamWindow({ config: deps.config, clock: () => now }, em, teamId);
  const episodes = await sqlQuery<{
    metric: DeliverabilityMetric;
    warned_at: Date;
    paused_at: Date | null;
    lifted_until: Date | null;
  }>(
    em,
    'SELECT metric, warned_at, paused_at, lifted_until FROM deliverability_episode WHERE team_id = ? ORDER BY metric',
    [teamId],
  );
  const regions = await sqlQuery<{ region: string }>(
    em,
    'SELECT DISTINCT region FROM region_broadcast_pause ORDER BY region',
  );
  return {
    windowDays: deps.config.POSTLANE_DELIVERABILITY_WINDOW_DAYS,
    minVolume: deps.config.POSTLANE_DELIVERABILITY_MIN_VOLUME,
    counts,
    rates: ratesOf(deps.config, counts),
    lines: teamLines(deps.config),
    episodes: episodes.map((e) => ({
      metric: e.metric,
      warnedAt: new Date(e.warned_at),
      pausedAt: e.paused_at && new Date(e.paused_at),
      liftedUntil: e.lifted_until && new Date(e.lifted_until),
    })),
    regionsPaused: regions.map((r) => r.region),
  };
}
