import type { Deps } from '../../deps.js';
import { updateScheduledEmail } from './update-scheduled-email.js';

/** Cancels a scheduled email that has not gone out; its job then finds nothing to claim. */
export async function cancelEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  await updateScheduledEmail(deps, teamId, id, { status: 'canceled', lastEvent: 'canceled' }, 'canceled');
}
