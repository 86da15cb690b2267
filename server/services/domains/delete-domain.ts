import type { Deps } from '../../deps.js';
import { DomainClaim, type IDomain } from '../../entities/index.js';
import { OPEN_CLAIM_STATUSES } from './domain-claims.js';
import { tearDownIdentity } from './domain-owner.js';
import { getDomain } from './get-domain.js';

/**
 * Removes the domain and its DKIM key. Mail already queued from it still goes out (unsigned, and
 * through its region's provider); new sends from it follow the `from` rule again, and keys limited
 * to it can no longer send. Deleting a claim's placeholder cancels the claim (Resend's way to
 * cancel one). A provider identity another row of the name uses stays.
 */
export async function deleteDomain(
  deps: Pick<Deps, 'orm' | 'providers' | 'senderDomains'>,
  teamId: string,
  id: string,
): Promise<IDomain> {
  const domain = await getDomain(deps, teamId, id);
  const em = deps.orm.em;
  await tearDownIdentity(deps, em, domain);
  await em.nativeUpdate(
    DomainClaim,
    { domain: domain.id, status: { $in: [...OPEN_CLAIM_STATUSES] } },
    { status: 'canceled', blockedReason: null },
  );
  await em.remove(domain).flush();
  deps.senderDomains.evict(teamId);
  return domain;
}
