import type { Deps } from '../../deps.js';
import { type AudienceSource, type ContactRecord, findContacts, requireContact } from './contact-records.js';
import { deleteContactRecords } from './contact-writes.js';

/**
 * POST /contacts/batch/remove: deletes the team's contacts named by id or address, skipping
 * unknown ones. With `erase`, each address is also recorded for scrubbing from history.
 */
export async function deleteContacts(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  refs: { ids?: string[]; emails?: string[] },
  options: { erase: boolean; source?: AudienceSource },
): Promise<ContactRecord[]> {
  return deps.orm.em.transactional(async (em) => {
    const contacts = await findContacts(em, teamId, refs, { lock: true });
    await deleteContactRecords(em, teamId, contacts, options.source ?? 'api', options.erase);
    return contacts;
  });
}

/** DELETE /contacts/{id or email}: the same, for one contact that must exist. */
export async function deleteContact(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
  options: { erase: boolean; source?: AudienceSource },
): Promise<ContactRecord> {
  return deps.orm.em.transactional(async (em) => {
    const contact = await requireContact(em, teamId, idOrEmail, { lock: true });
    await deleteContactRecords(em, teamId, [contact], options.source ?? 'api', options.erase);
    return contact;
  });
}
