import type { Deps } from '../../deps.js';
import { Domain, type IDomain, type IEmail } from '../../entities/index.js';
import { parseMailbox } from '../../mail/address.js';
import type { DkimKey } from '../../providers/index.js';
import { domainOfAddress } from './domain-name.js';

/** A from-domain's tracking settings, as the send path needs them. */
export interface DomainTracking extends Pick<IDomain, 'name' | 'openTracking' | 'clickTracking' | 'trackingSubdomain'> {
  /** The tracking CNAME was found at the last check: only then do tracking URLs lead anywhere. */
  cnameVerified: boolean;
}

/**
 * What the team's domain for the `from` address adds to an email, in one lookup: the key that
 * signs it, when Postlane signs for that domain's provider, and its tracking settings. Nothing
 * (unsigned, untracked) when the domain was never added or was removed since.
 */
export async function senderDomainForEmail(deps: Pick<Deps, 'orm' | 'secrets'>, email: Pick<IEmail, 'team' | 'from'>): Promise<{ dkim?: DkimKey; tracking?: DomainTracking }> {
  const from = parseMailbox(email.from);
  if (typeof from === 'string') return {};
  const name = domainOfAddress(from.address);
  const domain = await deps.orm.em.findOne(Domain, { team: email.team.id, name }, { fields: ['id', 'dkimSelector', 'dkimPrivateKey', 'openTracking', 'clickTracking', 'trackingSubdomain', 'records'] });
  if (!domain) return {};
  const dkim = domain.dkimPrivateKey && domain.dkimSelector ? { domainName: name, keySelector: domain.dkimSelector, privateKey: deps.secrets.open(domain.dkimPrivateKey, `dkim:${domain.id}`) } : undefined;
  const cnameVerified = domain.records.some((r) => r.record === 'Tracking' && r.status === 'verified');
  return { dkim, tracking: { name, openTracking: domain.openTracking, clickTracking: domain.clickTracking, trackingSubdomain: domain.trackingSubdomain, cnameVerified } };
}
