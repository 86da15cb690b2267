import type { Deps } from '../../deps.js';
import { ApiKey, Contact, Domain, type ITeam, Team } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { type TeamDeliverability, teamDeliverability } from '../deliverability/team-deliverability.js';
import { readUsage } from '../usage/read-usage.js';

/** What `postlane teams show` prints: the team, a count of what it has, and its deliverability. */
export async function describeTeam(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  teamId: string,
): Promise<{
  team: ITeam;
  apiKeys: number;
  domains: number;
  contacts: number;
  acceptedToday: number;
  deliverability: TeamDeliverability;
}> {
  const em = deps.orm.em;
  const team = await em.findOne(Team, teamId);
  if (!team) throw notFound('Team');
  const now = deps.clock();
  const [apiKeys, domains, contacts, usage, deliverability] = await Promise.all([
    em.count(ApiKey, { team: teamId, revokedAt: null }),
    em.count(Domain, { team: teamId }),
    em.count(Contact, { team: teamId }),
    readUsage(deps, teamId, now),
    teamDeliverability(deps, em, teamId, now),
  ]);
  return { team, apiKeys, domains, contacts, acceptedToday: usage.today, deliverability };
}
