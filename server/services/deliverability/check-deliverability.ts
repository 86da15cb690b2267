import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { DELIVERABILITY_METRICS, type DeliverabilityMetric } from '../../entities/index.js';
import { ratesOf, regionLines, type WindowCounts, windowStartDay } from './deliverability-lines.js';
import { judgeTeam } from './judge-team.js';

type CheckDeps = Pick<Deps, 'orm' | 'config' | 'clock' | 'logger'>;

/**
 * The recurring judgement: rates move without any bounce too (the window slides at midnight UTC,
 * new sends dilute them), so every team in an episode, and every team past a risk line without
 * one, is judged again; then each region's platform-wide rates. A pass reads the window's
 * counters twice, grouped by team and by region; teams are judged each in its own transaction.
 */
export async function checkDeliverability(deps: CheckDeps): Promise<{ teams: number; regionsPaused: string[] }> {
  const config = deps.config;
  const since = windowStartDay(config, deps.clock());
  const teams = await sqlQuery<{ team_id: string }>(
    deps.orm.em,
    `WITH w AS (
       SELECT team_id, sum(sent)::float8 AS sent, sum(bounced) AS bounced, sum(complained) AS complained
         FROM deliverability_day WHERE day >= ?::date GROUP BY team_id)
     SELECT team_id FROM w WHERE sent >= ? AND (bounced / sent >= ? OR complained / sent >= ?)
     UNION SELECT team_id FROM deliverability_episode`,
    [
      since,
      config.POSTLANE_DELIVERABILITY_MIN_VOLUME,
      config.POSTLANE_BOUNCE_WARNING_PERCENT / 100,
      config.POSTLANE_COMPLAINT_WARNING_PERCENT / 100,
    ],
  );
  for (const { team_id: teamId } of teams) await deps.orm.em.transactional((tx) => judgeTeam(deps, tx, teamId));
  return { teams: teams.length, regionsPaused: await judgeRegions(deps, since) };
}

/**
 * Each region's rates over every team's mail: past the region's line, its broadcasts wait (a row in
 * region_broadcast_pause, which broadcast sends read); back under it (or below the minimum volume,
 * or with no mail left in the window), the row goes and they resume. Answers the paused regions.
 */
async function judgeRegions(deps: CheckDeps, since: string): Promise<string[]> {
  const em = deps.orm.em;
  const now = deps.clock();
  const lines = regionLines(deps.config);
  const windows = await sqlQuery<WindowCounts & { region: string }>(
    em,
    `SELECT region, sum(sent)::int AS sent, sum(bounced)::int AS bounced, sum(complained)::int AS complained
       FROM deliverability_day WHERE day >= ?::date GROUP BY region`,
    [since],
  );
  const held = await sqlQuery<{ region: string; metric: DeliverabilityMetric }>(
    em,
    'SELECT region, metric FROM region_broadcast_pause',
  );
  const regions = new Set([...windows.map((w) => w.region), ...held.map((h) => h.region)]);
  const paused = new Set<string>();
  for (const region of regions) {
    const counts = windows.find((w) => w.region === region) ?? { sent: 0, bounced: 0, complained: 0 };
    const rates = ratesOf(deps.config, counts);
    for (const metric of DELIVERABILITY_METRICS) {
      const rate = rates[metric];
      const wasHeld = held.some((h) => h.region === region && h.metric === metric);
      if (rate !== null && rate >= lines[metric]) {
        paused.add(region);
        await sqlQuery(
          em,
          `INSERT INTO region_broadcast_pause (region, metric, paused_at, rate) VALUES (?, ?, ?, ?)
           ON CONFLICT (region, metric) DO UPDATE SET rate = excluded.rate`,
          [region, metric, now, rate],
        );
        if (!wasHeld)
          deps.logger.warn(
            { region, metric, rate, line: lines[metric], sent: counts.sent },
            'region past its deliverability line: its broadcasts are paused',
          );
      } else if (wasHeld) {
        await sqlQuery(em, 'DELETE FROM region_broadcast_pause WHERE region = ? AND metric = ?', [region, metric]);
        deps.logger.info({ region, metric, rate }, 'region back under its deliverability line: its broadcasts resume');
      }
    }
  }
  return [...paused];
}
