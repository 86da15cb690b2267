import type { Deps } from '../../deps.js';
import { Email } from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';
import { enqueueSend } from './send-email.js';

/** Moves a scheduled email that has not gone out; a time in the past sends it now. */
export async function rescheduleEmail(deps: Deps, teamId: string, id: string, at: Date): Promise<void> {
  const em = deps.orm.em;
  if (!(await em.count(Email, { id, team: teamId }))) throw notFound('Email');
  const lastEvent = at.getTime() > deps.clock().getTime() ? 'scheduled' : 'queued';
  // Guarded on the state, so a worker claiming the email at this moment wins cleanly.
  const moved = await em.nativeUpdate(Email, { id, team: teamId, status: 'queued', lastEvent: 'scheduled' }, { scheduledAt: at, sendAfter: at, lastEvent });
  if (!moved) throw validationError('Only a scheduled email that has not been sent can be rescheduled');
  // The job for the old time finds the email not due and steps aside; this one is for the new time.
  await enqueueSend(deps, { id, sendAfter: at });
}
