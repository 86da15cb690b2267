import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { insertContacts } from './contact-writes.js';
import { createContact } from './create-contact.js';

/**
 * The team's contact with this (lower-cased) address, created when there is none (POST /events/send
 * by email), in the caller's transaction. A team with no contact cap takes no team lock, so calls
 * with different addresses never wait on each other: when a concurrent call inserts the same
 * address first, the unique index makes this insert wait for its commit and then fail with a
 * unique violation (23505), and the caller runs its transaction again, which finds that contact.
 * A team with a cap keeps createContact's team lock, which is what keeps its count exact.
 */
export async function ensureContact(
  deps: Pick<Deps, 'orm' | 'config'>,
  em: EntityManager,
  teamId: string,
  email: string,
): Promise<{ id: string; created: boolean }> {
  const [found] = await sqlQuery<{ id: string | null; contact_limit: number | null }>(
    em,
    `SELECT (SELECT id FROM contact WHERE team_id = ? AND email = ?) AS id,
            (SELECT contact_limit FROM team WHERE id = ?) AS contact_limit`,
    [teamId, email, teamId],
  );
  if (found?.id) return { id: found.id, created: false };
  if (found?.contact_limit != null || deps.config.POSTLANE_CLOUD)
    return { id: (await createContact(deps, teamId, { email })).id, created: true };
  const [created] = await insertContacts(
    em,
    teamId,
    [{ email, firstName: null, lastName: null, unsubscribed: false, properties: {} }],
    'api',
  );
  return { id: created!.id, created: true };
}
