import type { PlanName } from '../../../config/plans.js';
import type { Deps } from '../../deps.js';
import { type ITeam, Team } from '../../entities/index.js';

export interface TeamInput {
  name: string;
  /** Where owner notices (webhook trouble) go. */
  ownerEmails?: string[];
  plan?: PlanName | null;
}

export async function createTeam(deps: Pick<Deps, 'orm'>, input: TeamInput): Promise<ITeam> {
  const em = deps.orm.em;
  const team = em.create(Team, { name: input.name, ownerEmails: input.ownerEmails ?? [], plan: input.plan ?? null });
  await em.flush();
  return team;
}
