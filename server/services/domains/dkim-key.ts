import type { Deps } from '../../deps.js';
import { Domain, type IEmail } from '../../entities/index.js';
import { parseMailbox } from '../../mail/address.js';
import type { DkimKey } from '../../providers/index.js';
import { domainOfAddress } from './domain-name.js';

/**
 * The key that signs an email: its team's domain for the `from` address, when Postlane signs for
 * that domain's provider. None (unsigned) when the domain was never added or was removed since.
 */
export async function dkimKeyForEmail(deps: Pick<Deps, 'orm' | 'secrets'>, email: Pick<IEmail, 'team' | 'from'>): Promise<DkimKey | undefined> {
  const from = parseMailbox(email.from);
  if (typeof from === 'string') return undefined;
  const name = domainOfAddress(from.address);
  const domain = await deps.orm.em.findOne(Domain, { team: email.team.id, name, dkimPrivateKey: { $ne: null } }, { fields: ['id', 'dkimSelector', 'dkimPrivateKey'] });
  if (!domain?.dkimPrivateKey || !domain.dkimSelector) return undefined;
  return { domainName: name, keySelector: domain.dkimSelector, privateKey: deps.secrets.open(domain.dkimPrivateKey, `dkim:${domain.id}`) };
}
