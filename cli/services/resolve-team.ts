import type { MikroORM } from '@mikro-orm/postgresql';
import { isUuid } from '../../server/db/ids.js';
import { ApiKey, Domain, type ITeam, WebhookEndpoint } from '../../server/entities/index.js';
import { normalizeDomainName } from '../../server/services/domains/domain-name.js';
import { listTeams } from '../../server/services/teams/list-teams.js';

/** The object a command names, when it alone tells whose it is: a domain, an API key, a webhook endpoint. */
export interface OwnedObject {
  /** How the object reads in a message: `domain acme.test`. */
  label: string;
  /** The teams holding an object of that id or name (a domain name may be added by several teams). */
  owners: (orm: MikroORM) => Promise<string[]>;
}

/**
 * The team a command acts on: the one `--team` names (by id or by name),
 * else the one that owns the object the command names, else the only team there is.
 */
export async function resolveTeam(orm: MikroORM, team: string | undefined, object?: OwnedObject): Promise<ITeam> {
  const teams = await listTeams({ orm });
  if (team) return teamNamed(teams, team);
  const owners = object ? new Set(await object.owners(orm)) : new Set<string>();
  if (owners.size === 1) return teams.find((t) => owners.has(t.id))!;
  if (owners.size > 1)
    throw new Error(`${owners.size} teams have ${object!.label}; name one with --team <id or name>.`);
  if (teams.length === 1) return teams[0]!;
  if (teams.length === 0) throw new Error('There is no team yet. Run `postlane install` first.');
  if (object) throw new Error(`No team has ${object.label}.`);
  throw new Error(`There are ${teams.length} teams; name one with --team <id or name> (\`postlane teams list\`).`);
}

function teamNamed(teams: ITeam[], idOrName: string): ITeam {
  const byId = teams.find((t) => t.id === idOrName);
  if (byId) return byId;
  // Names are unique (team_name_unique).
  const byName = teams.find((t) => t.name === idOrName);
  if (byName) return byName;
  throw new Error(`No team has the id or name ${idOrName}.`);
}

const teamIds = (rows: { team: { id: string } }[]) => rows.map((row) => row.team.id);

export const domainObject = (idOrName: string): OwnedObject => ({
  label: `domain ${idOrName}`,
  owners: async (orm) => {
    const where = isUuid(idOrName) ? { id: idOrName } : { name: normalizeDomainName(idOrName) ?? '' };
    return teamIds(await orm.em.find(Domain, where, { fields: ['team'] }));
  },
});

export const apiKeyObject = (id: string): OwnedObject => ({
  label: `API key ${id}`,
  owners: async (orm) => (isUuid(id) ? teamIds(await orm.em.find(ApiKey, { id }, { fields: ['team'] })) : []),
});

export const webhookObject = (id: string): OwnedObject => ({
  label: `webhook ${id}`,
  owners: async (orm) => (isUuid(id) ? teamIds(await orm.em.find(WebhookEndpoint, { id }, { fields: ['team'] })) : []),
});
