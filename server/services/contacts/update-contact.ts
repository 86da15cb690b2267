import type { Deps } from '../../deps.js';
import type { ContactPropertyValue } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { checkPropertyValues, loadAudienceCatalog, mergeProperties } from './audience-catalog.js';
import { type AudienceSource, type ContactRecord, findContacts, requireContact } from './contact-records.js';
import { applyContactChanges } from './contact-writes.js';

export interface ContactChanges {
  email?: string;
  /** null clears the name. */
  firstName?: string | null;
  lastName?: string | null;
  /** An explicit false re-subscribes (the one way back in). */
  unsubscribed?: boolean;
  /** Provided keys overwrite, null removes a value. */
  properties?: Record<string, ContactPropertyValue | null>;
}

/** PATCH /contacts/{id or email}: only what is given changes; restating stored values changes nothing. */
export async function updateContact(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
  changes: ContactChanges,
  source: AudienceSource = 'api',
): Promise<ContactRecord> {
  return deps.orm.em.transactional(async (em) => {
    const before = await requireContact(em, teamId, idOrEmail, { lock: true });
    const problem = checkPropertyValues(changes.properties, await loadAudienceCatalog(em, teamId, { segments: false }));
    if (problem) throw validationError(problem);
    if (
      changes.email &&
      changes.email !== before.email &&
      (await findContacts(em, teamId, { emails: [changes.email] })).length
    ) {
      throw validationError('email: another contact already has this address');
    }
    const after: ContactRecord = {
      ...before,
      email: changes.email ?? before.email,
      firstName: changes.firstName === undefined ? before.firstName : changes.firstName,
      lastName: changes.lastName === undefined ? before.lastName : changes.lastName,
      unsubscribed: changes.unsubscribed ?? before.unsubscribed,
      properties: mergeProperties(before.properties, changes.properties),
    };
    const [written] = await applyContactChanges(em, teamId, [{ before, after }], source);
    return written!;
  });
}
