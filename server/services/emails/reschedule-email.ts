import type { Deps } from '../../deps.js';
import { Email } from '../../entities/index.js';
import { wakeDrain } from '../outbox/drain-outbox.js';
import type { Sender } from '../domains/authorize-sender.js';
import { updateScheduledEmail } from './update-scheduled-email.js';

/** Moves a scheduled email that has not gone out; a time in the past sends it now. A domain-limited key moves only its domain's. */
export async function rescheduleEmail(deps: Deps, sender: Sender, id: string, at: Date): Promise<void> {
  const lastEvent = at.getTime() > deps.clock().getTime() ? 'scheduled' : 'queued';
  await updateScheduledEmail(deps, sender, id, { scheduledAt: at, sendAfter: at, lastEvent }, 'rescheduled');
  // A run booked for the old time finds the email not due and books the next; this one is for the new time.
  const { region } = await deps.orm.em.findOneOrFail(Email, id, { fields: ['region'] });
  await wakeDrain(deps, region, at);
}
