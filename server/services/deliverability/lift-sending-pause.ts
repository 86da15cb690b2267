import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { conflict } from '../../errors.js';
import { lockTeamJudgement } from './judge-team.js';

/**
 * An operator lifts a team's sending pause by hand (`postlane teams unpause`), say after the team
 * cleaned its list: sends are accepted again at once, and the rates cannot pause the team again
 * for `hours` (warnings still follow the episode). If the rate is still past the pause line when
 * the lift runs out, the next judgement pauses the team again.
 */
export async function liftSendingPause(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  hours: number,
  now: Date,
): Promise<{ liftedUntil: Date }> {
  return deps.orm.em.transactional(async (tx) => {
    // The same turn judgements take, so none re-pauses the team halfway through.
    await lockTeamJudgement(tx, teamId);
    const liftedUntil = new Date(now.getTime() + hours * 3600_000);
    const [team] = await sqlQuery<{ id: string }>(
      tx,
      'UPDATE team SET sending_paused_at = NULL WHERE id = ? AND sending_paused_at IS NOT NULL RETURNING id',
      [teamId],
    );
    if (!team) throw conflict("This team's sending is not paused.");
    await sqlQuery(tx, 'UPDATE deliverability_episode SET paused_at = NULL, lifted_until = ? WHERE team_id = ?', [
      liftedUntil,
      teamId,
    ]);
    return { liftedUntil };
  });
}
