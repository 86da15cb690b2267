import type { MikroORM } from '@mikro-orm/postgresql';
import type { ITeam } from '../../server/entities/index.js';
import { listTeams } from '../../server/services/teams/list-teams.js';

/** The team a command acts on: the one named, or the only one there is. */
export async function resolveTeam(orm: MikroORM, teamId: string | undefined): Promise<ITeam> {
  const teams = await listTeams({ orm });
  if (teamId) {
    const team = teams.find((t) => t.id === teamId);
    if (!team) throw new Error(`No team with id ${teamId}.`);
    return team;
  }
  if (teams.length === 1) return teams[0]!;
  if (teams.length === 0) throw new Error('There is no team yet. Run `postlane install` first.');
  throw new Error(`There are ${teams.length} teams; name one with --team <id>.`);
}
