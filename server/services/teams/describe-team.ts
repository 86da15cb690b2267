import type { Deps } from '../../deps.js';
import { ApiKey, Contact, Domain, type ITeam, Team } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { readUsage } from '../usage/read-usage.js';

/** What `postlane teams show` prints: the team and a count of what it has. */
export async function describeTeam(deps: Pick<Deps, 'orm'>, teamId: string): Promise<{ team: ITeam; apiKeys: number; domains: number; contacts: number; acceptedToday: number }> {
  const em = deps.orm.em;
  const team = await em.findOne(Team, teamId);
  if (!team) throw notFound('Team');
  const [apiKeys, domains, contacts, usage] = await Promise.all([
    em.count(ApiKey, { team: teamId, revokedAt: null }),
    em.count(Domain, { team: teamId }),
    em.count(Contact, { team: teamId }),
    readUsage(deps, teamId, new Date()),
  ]);
  return { team, apiKeys, domains, contacts, acceptedToday: usage.today };
}
