import type { Deps } from '../../deps.js';
import { enqueueSend } from './send-email.js';
import { updateScheduledEmail } from './update-scheduled-email.js';

/** Moves a scheduled email that has not gone out; a time in the past sends it now. */
export async function rescheduleEmail(deps: Deps, teamId: string, id: string, at: Date): Promise<void> {
  const lastEvent = at.getTime() > deps.clock().getTime() ? 'scheduled' : 'queued';
  await updateScheduledEmail(deps, teamId, id, { scheduledAt: at, sendAfter: at, lastEvent }, 'rescheduled');
  // The job for the old time finds the email not due and steps aside; this one is for the new time.
  await enqueueSend(deps, { id, sendAfter: at });
}
