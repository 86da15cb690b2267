import type { Deps } from '../../deps.js';
import { insertContacts } from './contact-writes.js';
import { createContact } from './create-contact.js';

/**
 * A contact for an address the team has none for (POST /events/send by email), in a transaction of
 * its own. A team with no contact cap (`capped` false) takes no team lock, so calls with different
 * addresses never wait on each other: when a concurrent call inserts the same address first, the
 * unique index makes this insert wait for its commit and then fail with a unique violation
 * (23505), and the caller starts again and finds that contact. A team with a cap keeps
 * createContact's team lock, which is what keeps its count exact.
 */
export async function createEventContact(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  email: string,
  capped: boolean,
): Promise<string> {
  if (capped || deps.config.POSTLANE_CLOUD) return (await createContact(deps, teamId, { email })).id;
  const [created] = await deps.orm.em.transactional((em) =>
    insertContacts(
      em,
      teamId,
      [{ email, firstName: null, lastName: null, unsubscribed: false, properties: {} }],
      'api',
    ),
  );
  return created!.id;
}
