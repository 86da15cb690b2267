import type { Deps } from '../../deps.js';
import type { AudienceSource } from './contact-records.js';
import { type ContactInput, createContacts } from './create-contacts.js';

/**
 * POST /contacts (and the audience alias): a known address answers with its contact's id, as
 * Resend does, changing none of its fields; a new one past the team's cap is refused with 403.
 */
export async function createContact(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  input: ContactInput,
  source: AudienceSource = 'api',
): Promise<{ id: string }> {
  const result = await createContacts(deps, teamId, [{ index: 0, contact: input }], {
    onConflict: 'skip',
    validation: 'strict',
    source,
    label: () => '',
    skippedJoinSegments: true,
  });
  return { id: result.data[0]!.id };
}
