import type { Deps } from '../../deps.js';
import { Domain, DomainClaim, type IDomainClaim, Team } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { checkDomainLimit, type CreateDomainInput, domainSettings, domainTarget } from './create-domain.js';
import { CLAIM_WINDOW_SECONDS, newClaimToken, OPEN_CLAIM_STATUSES } from './domain-claims.js';
import { heldElsewhere, lockDomainName } from './domain-owner.js';

export type ClaimDomainInput = Omit<CreateDomainInput, 'receiving'>;

/**
 * POST /domains/claim: starts taking over a name another team of the appliance holds. A
 * placeholder domain (no records, key or provider identity: `claiming`) is made in the claimant's
 * team with the settings the domain will have, and a claim whose TXT record proves control of the
 * name. The same request again returns the open claim unchanged (`created: false`); different
 * settings supersede it with a new claim on the same placeholder.
 */
export async function claimDomain(
  deps: Pick<Deps, 'orm' | 'config' | 'providers' | 'clock'>,
  teamId: string,
  input: ClaimDomainInput,
): Promise<{ claim: IDomainClaim; created: boolean }> {
  const { name, region } = domainTarget(deps, input);
  const settings = domainSettings(input);
  return deps.orm.em.transactional(async (em) => {
    await lockDomainName(em, name);
    let placeholder = await em.findOne(Domain, { team: teamId, name });
    if (placeholder && !placeholder.claiming) throw validationError(`name: the domain ${name} is already this team's`);
    if (!placeholder && !(await heldElsewhere(em, teamId, name)))
      throw validationError(`name: no other team holds ${name}; add it with POST /domains`);

    if (placeholder) {
      const open = await em.findOne(
        DomainClaim,
        { domain: placeholder.id, status: { $in: [...OPEN_CLAIM_STATUSES] } },
        { orderBy: { createdAt: 'desc', id: 'desc' } },
      );
      const same =
        placeholder.region === region &&
        placeholder.openTracking === settings.openTracking &&
        placeholder.clickTracking === settings.clickTracking &&
        placeholder.trackingSubdomain === settings.trackingSubdomain;
      if (open && same && deps.clock() < open.expiresAt) return { claim: open, created: false };
      if (open)
        Object.assign(open, {
          status: deps.clock() < open.expiresAt ? 'superseded' : 'expired',
          blockedReason: null,
        });
      Object.assign(placeholder, { region, ...settings });
    } else {
      await checkDomainLimit(deps, em, teamId);
      placeholder = em.create(Domain, {
        team: em.getReference(Team, teamId),
        name,
        region,
        status: 'pending',
        claiming: true,
        ...settings,
        records: [],
        dkimSelector: null,
        dkimPrivateKey: null,
        nextCheckAt: null,
      });
    }
    const now = deps.clock();
    const claim = em.create(DomainClaim, {
      createdAt: now,
      team: em.getReference(Team, teamId),
      domain: placeholder,
      name,
      region,
      status: 'pending',
      token: newClaimToken(),
      blockedReason: null,
      failureReason: null,
      expiresAt: new Date(now.getTime() + CLAIM_WINDOW_SECONDS * 1000),
      completedAt: null,
    });
    return { claim, created: true };
  });
}
