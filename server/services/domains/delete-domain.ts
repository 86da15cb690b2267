import type { Deps } from '../../deps.js';
import type { IDomain } from '../../entities/index.js';
import { getDomain } from './get-domain.js';

/**
 * Removes the domain and its DKIM key. Mail already queued from it still goes out (unsigned, and
 * through its region's provider); new sends from it follow the `from` rule again, and keys limited
 * to it can no longer send.
 */
export async function deleteDomain(
  deps: Pick<Deps, 'orm' | 'providers' | 'senderDomains'>,
  teamId: string,
  id: string,
): Promise<IDomain> {
  const domain = await getDomain(deps, teamId, id);
  if (deps.providers.serves(domain.region))
    await deps.providers.forRegion(domain.region).tearDownDomain({ id: domain.id, name: domain.name });
  await deps.orm.em.remove(domain).flush();
  deps.senderDomains.evict(teamId);
  return domain;
}
