import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { ensureEmailExists } from './get-email.js';

/**
 * Changes an email only while it is still scheduled, guarded on that state in the update itself,
 * so a worker claiming the email at this moment wins cleanly (reschedule and cancel).
 */
export async function updateScheduledEmail(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
  changes: Partial<IEmail>,
  action: 'rescheduled' | 'canceled',
): Promise<void> {
  await ensureEmailExists(deps, teamId, id);
  const updated = await deps.orm.em.nativeUpdate(Email, { id, team: teamId, status: 'queued', lastEvent: 'scheduled' }, changes);
  if (!updated) throw validationError(`Only a scheduled email that has not been sent can be ${action}`);
}
