import type { Deps } from '../../deps.js';
import { Email } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { ensureEmailExists } from './get-email.js';
import { leaseRunOut } from './update-scheduled-email.js';

/**
 * Deletes the email with everything kept for it (body, recipients, attachments, events). One not
 * sent yet (queued or scheduled) then never goes out: its job finds nothing to claim. Refused
 * while a worker is handing it to the provider, which takes seconds; allowed once that worker's
 * lease has run out.
 */
export async function deleteEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  const em = deps.orm.em;
  await ensureEmailExists(deps, teamId, id);
  const deleted = await em.nativeDelete(Email, { id, team: teamId, $or: [{ status: { $ne: 'sending' } }, leaseRunOut()] });
  if (!deleted) throw validationError('The email is being sent right now; retry in a moment');
}
