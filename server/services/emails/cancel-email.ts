import type { Deps } from '../../deps.js';
import type { Sender } from '../domains/authorize-sender.js';
import { updateScheduledEmail } from './update-scheduled-email.js';

/** Cancels a scheduled email that has not gone out; its job then finds nothing to claim. A domain-limited key cancels only its domain's. */
export async function cancelEmail(deps: Pick<Deps, 'orm'>, sender: Sender, id: string): Promise<void> {
  await updateScheduledEmail(deps, sender, id, { status: 'canceled', lastEvent: 'canceled' }, 'canceled');
}
