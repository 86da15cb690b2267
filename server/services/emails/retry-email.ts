import type { Deps } from '../../deps.js';
import { Email, EmailRecipient, type IEmail, Suppression } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { addressHash } from '../suppressions/address-hash.js';
import { wakeDrain } from '../outbox/drain-outbox.js';
import { findEmail } from './email-delivery.js';

export interface RetriedEmail {
  id: string;
  /** `requeued`: a failed email owed to its recipients again; `now`: a retrying email's next attempt brought forward. */
  action: 'requeued' | 'now';
  /** Recipients it is owed to again. */
  recipients: number;
  /** Recipients left out: on the team's suppression list. */
  suppressed: number;
}

/**
 * Sends an email again now. A failed one is queued afresh (attempts from zero) for its recipients
 * that never accepted it and are not suppressed (a hard bounce suppressed its address, so that
 * one stays out); it is refused when no recipient is left. A retrying one has its next attempt
 * brought forward. Anything else (sent, scheduled, canceled, being sent) is refused. Guarded on
 * the state read, so a worker settling the email at this moment wins cleanly.
 */
export async function retryEmail(
  deps: Pick<Deps, 'orm' | 'jobs' | 'logger' | 'secrets'>,
  teamId: string,
  idOrMessageId: string,
): Promise<RetriedEmail> {
  const email = await findEmail(deps, teamId, idOrMessageId);
  const em = deps.orm.em;
  if (email.status === 'queued' && email.attempts > 0) {
    const updated = await em.nativeUpdate(
      Email,
      { id: email.id, status: 'queued', attempts: email.attempts },
      { sendAfter: new Date() },
    );
    if (!updated) throw validationError('The email changed while it was being retried; look at it again');
    await wakeDrain(deps, email.region, new Date());
    const owed = await em.count(EmailRecipient, { email: email.id, status: 'pending' });
    return { id: email.id, action: 'now', recipients: owed, suppressed: 0 };
  }
  if (email.status !== 'failed')
    throw validationError(
      `Only a failed email, or one waiting for another attempt, can be retried (this one is ${describe(email)})`,
    );
  return em
    .transactional(async (tx) => {
      const rejected = await tx.find(EmailRecipient, { email: email.id, status: 'rejected' });
      const hashes = rejected.map((r) => addressHash(deps.secrets, r.address));
      const suppressed = new Set(
        hashes.length === 0
          ? []
          : (
              await tx.find(Suppression, { team: teamId, addressHash: { $in: hashes } }, { fields: ['addressHash'] })
            ).map((s) => Buffer.from(s.addressHash).toString('hex')),
      );
      const owed = rejected.filter((_, at) => !suppressed.has(hashes[at]!.toString('hex')));
      if (owed.length === 0)
        throw validationError(
          rejected.length === 0
            ? 'The email has no recipient left to retry'
            : 'Every recipient of the email is suppressed (postlane suppressions, or DELETE /suppressions to lift one)',
        );
      const updated = await tx.nativeUpdate(
        Email,
        { id: email.id, status: 'failed' },
        {
          status: 'queued',
          attempts: 0,
          sendAfter: new Date(),
          leaseExpiresAt: null,
          ...(email.sentAt == null ? { lastEvent: 'queued' as const, lastEventAt: null } : {}),
        },
      );
      if (!updated) throw validationError('The email changed while it was being retried; look at it again');
      await tx.nativeUpdate(
        EmailRecipient,
        { id: { $in: owed.map((r) => r.id) } },
        { status: 'pending', response: null },
      );
      return {
        id: email.id,
        action: 'requeued' as const,
        recipients: owed.length,
        suppressed: rejected.length - owed.length,
      };
    })
    .then(async (retried) => {
      await wakeDrain(deps, email.region, new Date());
      return retried;
    });
}

const describe = (email: IEmail) =>
  email.status === 'queued' ? (email.lastEvent === 'scheduled' ? 'scheduled' : 'queued') : email.status;
