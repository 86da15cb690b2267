import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { DomainClaim, type DomainClaimBlockedReason, type IDomain, type IDomainClaim } from '../../entities/index.js';
import { domainSetup } from './create-domain.js';
import { CLAIM_GRACE_PERIOD_SECONDS, isOpen } from './domain-claims.js';
import { heldElsewhere, lockDomainName, tearDownIdentity } from './domain-owner.js';
import { getDomainClaim } from './get-domain-claim.js';

type ClaimDeps = Pick<Deps, 'orm' | 'config' | 'providers' | 'secrets' | 'senderDomains' | 'dns' | 'clock'>;

/** The owner's unsettled mail from the name, as `email` stores `from` (`addr@name` or `Name <addr@name>`). */
const OWNER_MAIL = `from email where team_id = ? and status in ('queued', 'sending') and lower(rtrim("from", '>')) like ?`;

/**
 * Why the owner may not lose the name yet, if anything: it changed hands by a claim less than the
 * grace period ago; mail from it is on its way now (queued or being sent), which a new provider
 * identity would leave unsigned or refused; or the owner has mail scheduled from it before the
 * claim expires, which goes out as scheduled first.
 */
async function blockedReason(
  deps: Pick<Deps, 'clock'>,
  em: EntityManager,
  claim: IDomainClaim,
  owner: IDomain,
): Promise<DomainClaimBlockedReason | null> {
  const graceStart = new Date(deps.clock().getTime() - CLAIM_GRACE_PERIOD_SECONDS * 1000);
  if (await em.count(DomainClaim, { name: claim.name, completedAt: { $gt: graceStart } })) return 'grace_period';
  const [mail] = await em.getConnection().execute<{ in_flight: string; scheduled: string }[]>(
    `select count(*) filter (where not (status = 'queued' and last_event = 'scheduled')) as in_flight,
              count(*) filter (where status = 'queued' and last_event = 'scheduled' and send_after < ?) as scheduled
         ${OWNER_MAIL}`,
    [claim.expiresAt, owner.team.id, `%@${claim.name}`],
  );
  if (Number(mail!.in_flight) > 0) return 'recent_owner_activity';
  if (Number(mail!.scheduled) > 0) return 'pending_scheduled_emails';
  return null;
}

/**
 * The name moves to the claimant: the owner's scheduled mail from it (all due after the claim's
 * window, or the claim would be blocked) is canceled, its row and provider identity go, and the
 * placeholder becomes a domain of its own with new DKIM keys (a new key, or a new SES identity),
 * checked from now as a new domain is. The old identity goes first (SES keeps one per name); should
 * the new one then fail, the rows roll back and verifying again finishes the move.
 */
async function transfer(deps: ClaimDeps, em: EntityManager, claim: IDomainClaim, owner: IDomain | null) {
  const placeholder = claim.domain!;
  if (owner) {
    await em.getConnection().execute(
      `update email set status = 'canceled', last_event = 'canceled', last_event_at = now(), updated_at = now()
          where id in (select id ${OWNER_MAIL} and status = 'queued' and last_event = 'scheduled')`,
      [owner.team.id, `%@${claim.name}`],
    );
    await tearDownIdentity(deps, em, owner);
    em.remove(owner);
    await em.flush();
  }
  const setup = await deps.providers
    .forRegion(placeholder.region)
    .setUpDomain({ id: placeholder.id, name: placeholder.name });
  Object.assign(placeholder, {
    claiming: false,
    status: 'pending',
    ...domainSetup(deps, placeholder.id, placeholder.name, setup, placeholder),
  });
  Object.assign(claim, { status: 'completed', blockedReason: null, completedAt: deps.clock() });
}

/**
 * POST /domains/{id}/claim/verify: looks for the claim's TXT record through Postlane's resolver.
 * Not there (yet): the claim stays `pending`. There: the owner's safety checks either block it
 * (`blocked`, with the reason; verifying again later looks again) or the name moves to the
 * claimant (`completed`). A claim that is no longer open is returned as it is.
 */
export async function verifyDomainClaim(deps: ClaimDeps, teamId: string, domainId: string): Promise<IDomainClaim> {
  const claim = await getDomainClaim(deps, teamId, domainId);
  if (!isOpen(claim) || !claim.domain) return claim;
  if (!deps.providers.serves(claim.region)) {
    Object.assign(claim, {
      status: 'failed',
      blockedReason: null,
      failureReason: `region ${claim.region} is no longer served here`,
    });
    await deps.orm.em.flush();
    return claim;
  }
  const answer = await deps.dns.query(claim.name, 'TXT');
  if (answer.kind !== 'found' || !answer.values.some((value) => value.trim() === claim.token)) {
    Object.assign(claim, { status: 'pending', blockedReason: null });
    await deps.orm.em.flush();
    return claim;
  }
  let ownerTeamId: string | undefined;
  await deps.orm.em.transactional(async (em) => {
    await lockDomainName(em, claim.name);
    const current = await em.findOneOrFail(DomainClaim, claim.id, { populate: ['domain'] });
    const owner = await heldElsewhere(em, teamId, claim.name);
    const reason = owner && (await blockedReason(deps, em, current, owner));
    if (reason) Object.assign(current, { status: 'blocked', blockedReason: reason });
    else await transfer(deps, em, current, owner);
    ownerTeamId = owner?.team.id;
  });
  await deps.orm.em.refresh(claim);
  deps.senderDomains.evict(teamId);
  if (ownerTeamId) deps.senderDomains.evict(ownerTeamId);
  return claim;
}
