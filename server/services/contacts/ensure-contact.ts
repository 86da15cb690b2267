import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { findContacts } from './contact-records.js';
import { insertContacts } from './contact-writes.js';
import { createContact } from './create-contact.js';

/**
 * The team's contact with this address, created when there is none (POST /events/send by email),
 * in the caller's transaction. A team with no contact cap takes no team lock: the insert runs in a
 * savepoint, and when a concurrent call inserted the same address first (the unique index makes
 * this one wait for its commit), the savepoint is rolled back and that contact is read. Calls with
 * different addresses never wait on each other. A team with a cap keeps createContact's team lock,
 * which is what keeps its count exact.
 */
export async function ensureContact(
  deps: Pick<Deps, 'orm' | 'config'>,
  em: EntityManager,
  teamId: string,
  email: string,
): Promise<string> {
  const [known] = await findContacts(em, teamId, { emails: [email] });
  if (known) return known.id;
  const [team] = await sqlQuery<{ contact_limit: number | null }>(em, 'SELECT contact_limit FROM team WHERE id = ?', [
    teamId,
  ]);
  if (team?.contact_limit != null || deps.config.POSTLANE_CLOUD)
    return (await createContact(deps, teamId, { email })).id;
  await sqlQuery(em, 'SAVEPOINT ensure_contact');
  try {
    const [created] = await insertContacts(
      em,
      teamId,
      [{ email: email.toLowerCase(), firstName: null, lastName: null, unsubscribed: false, properties: {} }],
      'api',
    );
    await sqlQuery(em, 'RELEASE SAVEPOINT ensure_contact');
    return created!.id;
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    await sqlQuery(em, 'ROLLBACK TO SAVEPOINT ensure_contact');
    const [taken] = await findContacts(em, teamId, { emails: [email] });
    if (!taken) throw err;
    return taken.id;
  }
}
