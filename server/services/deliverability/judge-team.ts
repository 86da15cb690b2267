import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { DELIVERABILITY_METRICS, type DeliverabilityMetric } from '../../entities/index.js';
import { emitEvent } from '../events/emit-event.js';
import { ratesOf, teamLines, type WindowCounts, windowStartDay } from './deliverability-lines.js';

export type JudgeDeps = Pick<Deps, 'config' | 'clock'>;

interface EpisodeRow {
  metric: DeliverabilityMetric;
  warned_at: string;
  paused_at: string | null;
  lifted_until: string | null;
}

/** The team's counts over the window, summed across regions and shards. */
export async function teamWindow(deps: JudgeDeps, em: EntityManager, teamId: string): Promise<WindowCounts> {
  const [row] = await sqlQuery<WindowCounts>(
    em,
    `SELECT coalesce(sum(sent), 0)::int AS sent, coalesce(sum(bounced), 0)::int AS bounced, coalesce(sum(complained), 0)::int AS complained
       FROM deliverability_day WHERE team_id = ? AND day >= ?::date`,
    [teamId, windowStartDay(deps.config, deps.clock())],
    'postlane_deliverability_team_window',
  );
  return row!;
}

/** Judgements of one team (and an operator's lift) take turns, to the end of the transaction. */
export async function lockTeamJudgement(tx: EntityManager, teamId: string): Promise<void> {
  await sqlQuery(tx, 'SELECT pg_advisory_xact_lock(hashtext(?))', [`deliverability:${teamId}`]);
}

/**
 * Judges a team's rates against its lines and moves its episodes, in the caller's transaction:
 * crossing the risk line begins an episode with `deliverability.warning` (once per episode and
 * metric); crossing the pause line pauses the team's sending with `deliverability.paused`; falling
 * under the pause line lifts the pause, and under the risk line (or below the minimum volume)
 * ends the episode. Judgements of one team take turns (an advisory lock held to the end of the
 * transaction), so concurrent bounces in any number of processes announce a crossing once: the
 * later one counts the earlier one's bounce and finds its episode.
 */
export async function judgeTeam(deps: JudgeDeps, tx: EntityManager, teamId: string): Promise<void> {
  await lockTeamJudgement(tx, teamId);
  const now = deps.clock();
  const rates = ratesOf(deps.config, await teamWindow(deps, tx, teamId));
  const episodes = new Map(
    (
      await sqlQuery<EpisodeRow>(
        tx,
        'SELECT metric, warned_at, paused_at, lifted_until FROM deliverability_episode WHERE team_id = ?',
        [teamId],
      )
    ).map((e) => [e.metric, e]),
  );
  const lines = teamLines(deps.config);
  const data = (metric: DeliverabilityMetric, limit: number) => ({
    metric,
    rate: rates[metric],
    limit,
    window_days: deps.config.POSTLANE_DELIVERABILITY_WINDOW_DAYS,
    dashboard_url: deps.config.POSTLANE_PUBLIC_URL,
  });

  let paused = false;
  for (const metric of DELIVERABILITY_METRICS) {
    const rate = rates[metric];
    const episode = episodes.get(metric);
    const { warning, pause } = lines[metric];
    if (rate === null || rate < warning) {
      if (episode)
        await sqlQuery(tx, 'DELETE FROM deliverability_episode WHERE team_id = ? AND metric = ?', [teamId, metric]);
      continue;
    }
    if (!episode) {
      await sqlQuery(tx, 'INSERT INTO deliverability_episode (team_id, metric, warned_at) VALUES (?, ?, ?)', [
        teamId,
        metric,
        now,
      ]);
      await emitEvent(tx, { teamId, type: 'deliverability.warning', data: data(metric, warning), createdAt: now });
    }
    // An operator's lift holds the pause off until it runs out (or the episode ends).
    const lifted = episode?.lifted_until != null && new Date(episode.lifted_until) > now;
    const shouldPause = rate >= pause && !lifted;
    if (shouldPause && !episode?.paused_at) {
      await sqlQuery(tx, 'UPDATE deliverability_episode SET paused_at = ? WHERE team_id = ? AND metric = ?', [
        now,
        teamId,
        metric,
      ]);
      await emitEvent(tx, { teamId, type: 'deliverability.paused', data: data(metric, pause), createdAt: now });
    } else if (!shouldPause && episode?.paused_at) {
      await sqlQuery(tx, 'UPDATE deliverability_episode SET paused_at = NULL WHERE team_id = ? AND metric = ?', [
        teamId,
        metric,
      ]);
    }
    paused ||= shouldPause;
  }
  // What every send reads (admitSends): set while any metric holds a pause, cleared once none does.
  await sqlQuery(
    tx,
    `UPDATE team SET sending_paused_at = CASE WHEN ? THEN ?::timestamptz ELSE NULL END
      WHERE id = ? AND (sending_paused_at IS NOT NULL) <> ?`,
    [paused, now, teamId, paused],
  );
}
