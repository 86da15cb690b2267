import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { Domain, type IDomain } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { normalizeDomainName } from './domain-name.js';

/** By id, or (for the CLI) by name; another team's domain reads as missing. */
export async function getDomain(deps: Pick<Deps, 'orm'>, teamId: string, idOrName: string): Promise<IDomain> {
  const name = isUuid(idOrName) ? null : normalizeDomainName(idOrName);
  const domain = isUuid(idOrName)
    ? await deps.orm.em.findOne(Domain, { id: idOrName, team: teamId })
    : name
      ? await deps.orm.em.findOne(Domain, { name, team: teamId })
      : null;
  if (!domain) throw notFound('Domain');
  return domain;
}
