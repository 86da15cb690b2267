import type { Deps } from '../../deps.js';
import { Domain, type IDomain } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { checkRecords } from './check-records.js';
import { domainStatus } from './domain-records.js';
import { getDomain } from './get-domain.js';

/** Waits between checks of a domain not verified yet, by check number; the last repeats. */
export const PENDING_CHECK_DELAYS_SECONDS = [60, 300, 900, 1800, 3600, 7200, 14_400, 21_600] as const;
/** How long a domain is looked at before an unverified one reads `failed` and checks stop (Resend's 72 h). */
export const VERIFICATION_WINDOW_SECONDS = 72 * 3600;
/** A verified domain is checked again once a day, so lost records are noticed. */
export const VERIFIED_CHECK_INTERVAL_SECONDS = 24 * 3600;
/** A check that crashed is retried after this long (the claim pushes `next_check_at` this far). */
const CHECK_LEASE_SECONDS = 300;

type CheckDeps = Pick<Deps, 'orm' | 'dns' | 'clock' | 'logger' | 'senderDomains'>;

const later = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

/** A new domain: its window opens now and the recurring check looks at it on its next tick. */
export const checkAfterCreation = (now: Date) => ({ checkingSince: now, checkAttempts: 0, nextCheckAt: now });

/**
 * Asks DNS for every record of the domain and records what it found. The status follows the required
 * records (see `domainStatus`); a verified domain that lost records is reported at warn and checked
 * again with backoff, as a new one is.
 */
async function checkDomain(deps: CheckDeps, domain: IDomain): Promise<IDomain> {
  const records = await checkRecords(deps.dns, domain.records, domain.name);
  const now = deps.clock();
  const wasVerified = domain.status === 'verified';
  // Records lost from a verified domain open a new window, as for a new domain.
  const windowOpen =
    wasVerified ||
    now.getTime() - (domain.checkingSince ?? domain.createdAt).getTime() < VERIFICATION_WINDOW_SECONDS * 1000;
  const status = domainStatus(records, wasVerified, windowOpen);
  const log = deps.logger.child({ domainId: domain.id, domain: domain.name });
  const problems = records
    .filter((r) => r.required && r.status !== 'verified')
    .map((r) => `${r.record} ${r.name}: ${r.detail}`);

  domain.records = records;
  domain.lastCheckedAt = now;
  if (status === 'verified' && problems.length === 0) {
    if (!wasVerified) log.info('domain verified');
    Object.assign(domain, {
      status,
      verifiedAt: now,
      checkAttempts: 0,
      checkingSince: null,
      nextCheckAt: later(now, VERIFIED_CHECK_INTERVAL_SECONDS),
    });
  } else if (status === 'verified') {
    // Verified, and this check only timed out: keep sending, look again soon.
    log.warn({ problems }, 'domain DNS check got no answer; the domain stays verified');
    Object.assign(domain, {
      checkAttempts: domain.checkAttempts + 1,
      nextCheckAt: later(now, backoff(domain.checkAttempts)),
    });
  } else {
    if (wasVerified)
      log.warn(
        { status, problems },
        'a verified domain lost DNS records; sending from it through a relay stops until they are back',
      );
    const checkingSince = wasVerified ? now : (domain.checkingSince ?? domain.createdAt);
    const stillLooking = windowOpen || status === 'temporary_failure';
    Object.assign(domain, {
      status,
      checkingSince,
      checkAttempts: wasVerified ? 1 : domain.checkAttempts + 1,
      nextCheckAt: stillLooking ? later(now, backoff(wasVerified ? 0 : domain.checkAttempts)) : null,
    });
  }
  await deps.orm.em.flush();
  deps.senderDomains.evict(domain.team.id);
  return domain;
}

const backoff = (attempt: number) =>
  PENDING_CHECK_DELAYS_SECONDS[Math.min(attempt, PENDING_CHECK_DELAYS_SECONDS.length - 1)]!;

/** POST /domains/{id}/verify and `postlane domains verify`: checks now, and opens a fresh 72 h window. */
export async function verifyDomain(deps: CheckDeps, teamId: string, id: string): Promise<IDomain> {
  const domain = await getDomain(deps, teamId, id);
  // A placeholder has no records of its own yet: with none required, a check would call it verified.
  if (domain.claiming)
    throw validationError(
      `The domain ${domain.name} is waiting for its claim: verify the claim with POST /domains/${domain.id}/claim/verify`,
    );
  if (domain.status !== 'verified') Object.assign(domain, { checkingSince: deps.clock(), checkAttempts: 0 });
  return checkDomain(deps, domain);
}

/**
 * The recurring job: claims due domains by pushing their next check a lease ahead (so two workers
 * never check one domain at once, and a crashed check comes back), then checks each.
 */
export async function checkDueDomains(deps: CheckDeps, limit = 20): Promise<number> {
  const em = deps.orm.em;
  const claimed = await em.getConnection().execute<{ id: string }[]>(
    `UPDATE domain SET next_check_at = now() + make_interval(secs => ?)
      WHERE id IN (SELECT id FROM domain WHERE next_check_at <= now() AND NOT claiming ORDER BY next_check_at LIMIT ? FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    [CHECK_LEASE_SECONDS, limit],
  );
  for (const { id } of claimed) {
    const domain = await em.findOne(Domain, { id });
    if (!domain) continue;
    try {
      await checkDomain(deps, domain);
    } catch (err) {
      deps.logger.error(
        { err: (err as Error).message, domainId: id },
        'domain DNS check failed; it is retried when its claim ends',
      );
    }
  }
  return claimed.length;
}
