import type { Deps } from '../../deps.js';
import { Domain, type IEmail } from '../../entities/index.js';
import { parseMailbox } from '../../mail/address.js';
import type { DkimKey } from '../../providers/index.js';
import { domainOfAddress } from './domain-name.js';

/**
 * The keys that sign a batch of emails, one per email in order: its team's domain for the `from`
 * address, when Postlane signs for that domain's provider. None (unsigned) when the domain was
 * never added or was removed since. One query and one decryption per distinct domain.
 */
export async function dkimKeysForEmails(deps: Pick<Deps, 'orm' | 'secrets'>, emails: readonly Pick<IEmail, 'team' | 'from'>[]): Promise<(DkimKey | undefined)[]> {
  const wanted = emails.map((email) => {
    const from = parseMailbox(email.from);
    return typeof from === 'string' ? null : { teamId: email.team.id, name: domainOfAddress(from.address) };
  });
  const pairs = [...new Map(wanted.flatMap((w) => (w ? [[`${w.teamId}/${w.name}`, w] as const] : []))).values()];
  if (pairs.length === 0) return emails.map(() => undefined);
  const domains = await deps.orm.em.find(
    Domain,
    { $or: pairs.map((w) => ({ team: w.teamId, name: w.name })), dkimPrivateKey: { $ne: null } },
    { fields: ['id', 'team', 'name', 'dkimSelector', 'dkimPrivateKey'] },
  );
  const keys = new Map<string, DkimKey>();
  for (const domain of domains) {
    if (!domain.dkimPrivateKey || !domain.dkimSelector) continue;
    keys.set(`${domain.team.id}/${domain.name}`, { domainName: domain.name, keySelector: domain.dkimSelector, privateKey: deps.secrets.open(domain.dkimPrivateKey, `dkim:${domain.id}`) });
  }
  return wanted.map((w) => (w ? keys.get(`${w.teamId}/${w.name}`) : undefined));
}
