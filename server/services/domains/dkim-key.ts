import type { DkimKey } from '../../mail/outbound-message.js';
import type { Deps } from '../../deps.js';
import { Domain, type EmailFacts, type IDomain } from '../../entities/index.js';
import { splitFormatted } from '../../mail/address.js';

import { domainOfAddress } from './domain-name.js';

/** A from-domain's tracking settings, as the send path needs them. */
export interface DomainTracking extends Pick<IDomain, 'name' | 'openTracking' | 'clickTracking' | 'trackingSubdomain'> {
  /** The tracking CNAME was found at the last check: only then do tracking URLs lead anywhere. */
  cnameVerified: boolean;
}

/** What the team's domain for an email's `from` address adds to it. */
export interface FromDomainSettings {
  /** The key that signs it, when Postlane signs for that domain's provider. */
  dkim?: DkimKey;
  tracking?: DomainTracking;
  /**
   * Why the domain's sealed DKIM key did not open (POSTLANE_SECRET_KEY changed, a restore): its
   * emails are held back (retried, then failed at the attempts cap) rather than sent unsigned,
   * and the others of their batch go out as usual.
   */
  unusable?: string;
}

/**
 * The sender domain of each email of a batch, in order: its signing key and tracking settings.
 * Nothing (unsigned, untracked) when the domain was never added or was removed since. Stored
 * `from` values are the strict parser's canonical form, so they split without parsing. One query,
 * and one decryption per distinct domain; a key that does not open marks its domain `unusable`.
 */
export async function senderDomainsForEmails(
  deps: Pick<Deps, 'orm' | 'secrets'>,
  emails: readonly Pick<EmailFacts, 'team' | 'from'>[],
): Promise<FromDomainSettings[]> {
  const wanted = emails.map((email) => {
    const from = splitFormatted(email.from);
    return from && { teamId: email.team.id, name: domainOfAddress(from.address) };
  });
  const pairs = [...new Map(wanted.flatMap((w) => (w ? [[`${w.teamId}/${w.name}`, w] as const] : []))).values()];
  if (pairs.length === 0) return emails.map(() => ({}));
  const domains = await deps.orm.em.find(
    Domain,
    { $or: pairs.map((w) => ({ team: w.teamId, name: w.name })) },
    {
      fields: [
        'id',
        'team',
        'name',
        'dkimSelector',
        'dkimPrivateKey',
        'openTracking',
        'clickTracking',
        'trackingSubdomain',
        'records',
      ],
    },
  );
  const byName = new Map<string, FromDomainSettings>();
  for (const domain of domains) {
    const cnameVerified = domain.records.some((r) => r.record === 'Tracking' && r.status === 'verified');
    const tracking = {
      name: domain.name,
      openTracking: domain.openTracking,
      clickTracking: domain.clickTracking,
      trackingSubdomain: domain.trackingSubdomain,
      cnameVerified,
    };
    const key = `${domain.team.id}/${domain.name}`;
    try {
      byName.set(key, { dkim: dkimKeyOf(deps, domain), tracking });
    } catch (err) {
      byName.set(key, {
        tracking,
        unusable: `the DKIM key of ${domain.name} cannot be opened (${(err as Error).message}); was POSTLANE_SECRET_KEY changed?`,
      });
    }
  }
  return wanted.map((w) => (w && byName.get(`${w.teamId}/${w.name}`)) || {});
}

/** The domain's signing key, opened; none when Postlane does not sign for it. Throws when the sealed key does not open. */
export function dkimKeyOf(
  deps: Pick<Deps, 'secrets'>,
  domain: Pick<IDomain, 'id' | 'name' | 'dkimSelector' | 'dkimPrivateKey'>,
): DkimKey | undefined {
  if (!domain.dkimPrivateKey || !domain.dkimSelector) return undefined;
  return {
    domainName: domain.name,
    keySelector: domain.dkimSelector,
    privateKey: deps.secrets.open(domain.dkimPrivateKey, `dkim:${domain.id}`),
  };
}
