import type { Deps } from '../../deps.js';
import { Email } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { findEmail } from './email-delivery.js';
import type { Sender } from '../domains/authorize-sender.js';
import { updateScheduledEmail } from './update-scheduled-email.js';

/** Cancels a scheduled email that has not gone out; its job then finds nothing to claim. A domain-limited key cancels only its domain's. */
export async function cancelEmail(deps: Pick<Deps, 'orm'>, sender: Sender, id: string): Promise<void> {
  await updateScheduledEmail(deps, sender, id, { status: 'canceled', lastEvent: 'canceled' }, 'canceled');
}

/**
 * The operator's cancel (`postlane emails cancel`): also stops an email that is queued, parked or
 * retrying, as long as no recipient has accepted it yet; guarded on that state in the update, so
 * a worker claiming it at this moment wins cleanly. Returns the email's id.
 */
export async function cancelUnsentEmail(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrMessageId: string,
): Promise<string> {
  const email = await findEmail(deps, teamId, idOrMessageId);
  if (email.status === 'queued' && email.lastEvent === 'scheduled') {
    // The operator acts for the whole team, as a full-access key does.
    await cancelEmail(deps, { teamId, domainId: null }, email.id);
    return email.id;
  }
  const updated = await deps.orm.em.nativeUpdate(
    Email,
    { id: email.id, team: teamId, status: 'queued', sentAt: null },
    { status: 'canceled', lastEvent: 'canceled', lastEventAt: new Date() },
  );
  if (!updated)
    throw validationError(
      `Only an email no recipient has accepted yet can be canceled (this one is ${email.status === 'sending' ? 'being sent now' : email.status})`,
    );
  return email.id;
}
