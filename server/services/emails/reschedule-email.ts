import type { Deps } from '../../deps.js';
import { Email } from '../../entities/index.js';
import { wakeDrain } from '../outbox/drain-outbox.js';
import { updateScheduledEmail } from './update-scheduled-email.js';

/** Moves a scheduled email that has not gone out; a time in the past sends it now. */
export async function rescheduleEmail(deps: Deps, teamId: string, id: string, at: Date): Promise<void> {
  const lastEvent = at.getTime() > deps.clock().getTime() ? 'scheduled' : 'queued';
  await updateScheduledEmail(deps, teamId, id, { scheduledAt: at, sendAfter: at, lastEvent }, 'rescheduled');
  // A run booked for the old time finds the email not due and books the next; this one is for the new time.
  const { region } = await deps.orm.em.findOneOrFail(Email, id, { fields: ['region'] });
  await wakeDrain(deps, region, at);
}
