import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { Domain, type IDomain } from '../../entities/index.js';

/**
 * Serialises everything that decides who holds a domain name (adding it, completing a claim) for
 * the rest of the transaction: the name has one owner across the appliance, and two teams adding
 * it at once must not both pass the check.
 */
export async function lockDomainName(em: EntityManager, name: string): Promise<void> {
  await em.getConnection().execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`domain:${name}`], 'get');
}

/** The team holding this name, other than `teamId`: its domain row (a claim's placeholder holds nothing). */
export function heldElsewhere(em: EntityManager, teamId: string, name: string): Promise<IDomain | null> {
  return em.findOne(Domain, { name, claiming: false, team: { $ne: teamId } }, { orderBy: { createdAt: 'asc' } });
}

/**
 * Removes the provider-side identity of a domain row that is going away (SES deletes its identity),
 * unless another row of the name still uses it: two rows of one name can only be left from before
 * names had one owner, and deleting the second must not break the first.
 */
export async function tearDownIdentity(
  deps: Pick<Deps, 'orm' | 'providers'>,
  em: EntityManager,
  domain: IDomain,
): Promise<void> {
  if (domain.claiming || !deps.providers.serves(domain.region)) return;
  if (await em.count(Domain, { name: domain.name, claiming: false, id: { $ne: domain.id } })) return;
  await deps.providers.forRegion(domain.region).tearDownDomain({ id: domain.id, name: domain.name });
}
