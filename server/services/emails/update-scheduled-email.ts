import { sql } from '@mikro-orm/core';
import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import type { Sender } from '../domains/authorize-sender.js';
import { ensureEmailInScope } from './get-email.js';

/**
 * Claimed by a worker whose lease has run out (it died, or the email made it fail before any
 * outcome was written): nobody is sending it, and until the sweeper queues it again it may be
 * changed or deleted as if it were queued.
 */
export const leaseRunOut = () => ({ status: 'sending' as const, leaseExpiresAt: { $lt: sql.now() } });

/**
 * Changes an email only while it is still scheduled (or held by a lease that ran out), guarded on
 * that state in the update itself, so a worker claiming the email at this moment wins cleanly
 * (reschedule and cancel). A cancel also stops an email of a lease that ran out that was not
 * scheduled, as long as nobody has received it yet.
 */
export async function updateScheduledEmail(
  deps: Pick<Deps, 'orm'>,
  sender: Sender,
  id: string,
  changes: Partial<IEmail>,
  action: 'rescheduled' | 'canceled',
): Promise<void> {
  await ensureEmailInScope(deps, sender, id);
  const teamId = sender.teamId;
  const orphaned = {
    ...leaseRunOut(),
    ...(action === 'canceled' ? { sentAt: null } : { lastEvent: 'scheduled' as const }),
  };
  const updated = await deps.orm.em.nativeUpdate(
    Email,
    { id, team: teamId, $or: [{ status: 'queued', lastEvent: 'scheduled' }, orphaned] },
    { status: 'queued', ...changes, leaseExpiresAt: null },
  );
  if (!updated) throw validationError(`Only a scheduled email that has not been sent can be ${action}`);
}
