import type { Deps } from '../../deps.js';
import { type ITeam, Team } from '../../entities/index.js';

export async function createTeam(deps: Pick<Deps, 'orm'>, input: { name: string }): Promise<ITeam> {
  const em = deps.orm.em;
  const team = em.create(Team, { name: input.name });
  await em.flush();
  return team;
}
