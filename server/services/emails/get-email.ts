import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { splitFormatted } from '../../mail/address.js';
import type { Sender } from '../domains/authorize-sender.js';
import { domainOfAddress } from '../domains/domain-name.js';

export async function getEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IEmail> {
  const email = await deps.orm.em.findOne(Email, { id, team: teamId });
  if (!email) throw notFound('Email');
  return email;
}

/** 404 unless the team has this email; another team's id reads exactly like a missing one. */
export async function ensureEmailExists(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  if (!(await deps.orm.em.count(Email, { id, team: teamId }))) throw notFound('Email');
}

/**
 * 404 unless the email is the sender's to change: the team's, and for a key limited to a domain, sent
 * from that domain (another domain's email reads exactly like a missing one, as another team's does).
 */
export async function ensureEmailInScope(deps: Pick<Deps, 'orm'>, sender: Sender, id: string): Promise<void> {
  if (!sender.domainId) return ensureEmailExists(deps, sender.teamId, id);
  const [row] = await deps.orm.em
    .getConnection()
    .execute<{ from: string; domain: string | null }[]>(
      'SELECT e."from", (SELECT d.name FROM domain d WHERE d.id = ? AND d.team_id = e.team_id) AS domain FROM email e WHERE e.id = ? AND e.team_id = ?',
      [sender.domainId, id, sender.teamId],
    );
  const address = row ? (splitFormatted(row.from)?.address ?? row.from) : null;
  if (!row || !address || row.domain === null || domainOfAddress(address) !== row.domain) throw notFound('Email');
}
