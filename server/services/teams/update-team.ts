import type { PlanName } from '../../../config/plans.js';
import type { Deps } from '../../deps.js';
import { type ITeam, Team } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { assertTeamNameFree } from './create-team.js';

export interface TeamChanges {
  name?: string;
  ownerEmails?: string[];
  plan?: PlanName;
  overageEnabled?: boolean;
}

/** Only what is given changes. */
export async function updateTeam(deps: Pick<Deps, 'orm'>, teamId: string, changes: TeamChanges): Promise<ITeam> {
  const em = deps.orm.em;
  const team = await em.findOne(Team, teamId);
  if (!team) throw notFound('Team');
  if (changes.name !== undefined) await assertTeamNameFree(deps, changes.name, teamId);
  em.assign(team, Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)));
  await em.flush();
  return team;
}
