import type { Deps } from '../../deps.js';
import { type ITeam, Team } from '../../entities/index.js';

export async function listTeams(deps: Pick<Deps, 'orm'>): Promise<ITeam[]> {
  return deps.orm.em.find(Team, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
}
