import type { PlanName } from '../../../config/plans.js';
import type { Deps } from '../../deps.js';
import { type ITeam, Team } from '../../entities/index.js';
import { conflict } from '../../errors.js';

export interface TeamInput {
  name: string;
  /** Where owner notices (webhook trouble) go. */
  ownerEmails?: string[];
  plan?: PlanName | null;
}

/** Teams are named by their name (`--team Beta`): two of the same name would make it ambiguous. */
export async function assertTeamNameFree(deps: Pick<Deps, 'orm'>, name: string, exceptId?: string): Promise<void> {
  const taken = await deps.orm.em.findOne(
    Team,
    { name, ...(exceptId ? { id: { $ne: exceptId } } : {}) },
    { fields: ['id'] },
  );
  if (taken) throw conflict(`A team named ${name} already exists (${taken.id}).`);
}

export async function createTeam(deps: Pick<Deps, 'orm'>, input: TeamInput): Promise<ITeam> {
  await assertTeamNameFree(deps, input.name);
  const em = deps.orm.em;
  const team = em.create(Team, { name: input.name, ownerEmails: input.ownerEmails ?? [], plan: input.plan ?? null });
  await em.flush();
  return team;
}
