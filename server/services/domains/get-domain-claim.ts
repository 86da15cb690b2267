import type { Deps } from '../../deps.js';
import { DomainClaim, type IDomainClaim } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { isOpen } from './domain-claims.js';

/**
 * The latest claim of the team's placeholder domain (Resend's `GET /domains/{domain_id}/claim`);
 * another team's reads as missing. An open claim past its window is marked `expired` here.
 */
export async function getDomainClaim(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  domainId: string,
): Promise<IDomainClaim> {
  const claim = await deps.orm.em.findOne(
    DomainClaim,
    { domain: domainId, team: teamId },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  if (!claim) throw notFound('Domain claim');
  if (isOpen(claim) && deps.clock() >= claim.expiresAt) {
    Object.assign(claim, { status: 'expired', blockedReason: null });
    await deps.orm.em.flush();
  }
  return claim;
}
