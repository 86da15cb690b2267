import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { Email, EmailAttachment, EmailRecipient, type IEmail, type IEmailAttachment } from '../../entities/index.js';
import { parseMailbox } from '../../mail/address.js';
import { type Address, type OutboundMessage, ProviderError, type SendResult } from '../../providers/index.js';
import { countAccepted } from '../deliverability/deliverability-counters.js';
import { senderDomainForEmail } from '../domains/dkim-key.js';
import { withTracking } from '../tracking/tracking-settings.js';
import { emitEmailEvent } from './record-email-event.js';
import { enqueueSend } from './send-email.js';

/** Retry delays after transient provider failures, by attempt number; the last repeats. */
export const SEND_RETRY_DELAYS_SECONDS = [30, 120, 600, 1800, 3600] as const;

/**
 * Claims the row with a compare-and-set lease; if nothing comes back someone else owns it or it is
 * done, so a duplicate job run sends nothing. If the process dies after the provider accepted the
 * message but before the result is committed, the message goes out again once the lease expires:
 * delivery is at least once, and the stored Message-ID makes the duplicate recognisable.
 */
export async function deliverEmail(deps: Deps, emailId: string): Promise<void> {
  const em = deps.orm.em;
  const leaseSeconds = deps.config.POSTLANE_SEND_LEASE_SECONDS;
  const row = await em.getConnection().execute<Record<string, unknown>>(
    `UPDATE email SET status = 'sending', lease_expires_at = now() + make_interval(secs => ?), attempts = attempts + 1, updated_at = now()
      WHERE id = ? AND send_after <= now() AND (status = 'queued' OR (status = 'sending' AND lease_expires_at < now()))
      RETURNING *`,
    [leaseSeconds, emailId],
    'get',
  );
  if (!row) return rescheduleUnclaimed(deps, emailId);
  const email = em.map(Email, row);
  const log = deps.logger.child({ emailId, attempt: email.attempts });

  // Only the recipients still owed a delivery: those accepted or refused for good are not sent again.
  const owed = await em.find(EmailRecipient, { email: email.id, status: 'pending' });
  const attachments = await em.find(EmailAttachment, { email: email.id }, { orderBy: { position: 'asc' } });

  if (deps.config.POSTLANE_TEST_SEND_DELAY_MS > 0) await sleep(deps.config.POSTLANE_TEST_SEND_DELAY_MS);

  let result: SendResult;
  try {
    const provider = deps.providers.forRegion(email.region);
    const sender = await senderDomainForEmail(deps, email);
    const message = withTracking(deps, { ...toOutboundMessage(email, owed.map((r) => r.address), attachments), dkim: sender.dkim }, sender.tracking);
    result = owed.length > 0 ? await provider.send(message, AbortSignal.timeout(Math.floor(leaseSeconds * 1000 * 0.8))) : { providerMessageId: '', recipients: [] };
  } catch (err) {
    const transient = !(err instanceof ProviderError) || err.transient;
    const message = (err as Error).message;
    deps.metrics.providerErrors.inc({ region: email.region, kind: transient ? 'transient' : 'permanent' });
    if (transient && email.attempts < deps.config.POSTLANE_SEND_MAX_ATTEMPTS) {
      await scheduleRetry(deps, email, message);
      deps.metrics.sendAttempts.inc({ region: email.region, outcome: 'retrying' });
      log.warn({ err: message }, 'send failed, will retry');
    } else {
      await recordFailure(deps, email, message);
      deps.metrics.sendAttempts.inc({ region: email.region, outcome: 'failed' });
      log.error({ err: message }, 'send failed permanently');
    }
    return;
  }
  const outcome = await recordOutcome(deps, email, result);
  deps.metrics.sendAttempts.inc({ region: email.region, outcome });
  log.info({ providerMessageId: result.providerMessageId, outcome }, 'send attempt recorded');
}

/** Stored addresses were accepted by the strict parser, so they parse again; the parts go to the provider. */
function toOutboundMessage(email: IEmail, envelopeTo: string[], attachments: IEmailAttachment[]): OutboundMessage {
  const parts = (formatted: string): Address => {
    const mailbox = parseMailbox(formatted);
    if (typeof mailbox === 'string') throw new ProviderError(`stored address ${JSON.stringify(formatted)} ${mailbox}`, false);
    return { name: mailbox.name, address: mailbox.address };
  };
  return {
    emailId: email.id,
    messageId: email.messageId,
    from: parts(email.from),
    to: email.to.map(parts),
    cc: email.cc.map(parts),
    bcc: email.bcc.map(parts),
    replyTo: email.replyTo.map(parts),
    envelopeTo,
    subject: email.subject,
    html: email.html ?? null,
    text: email.text ?? null,
    headers: email.headers,
    attachments: attachments.map((a) => ({ filename: a.filename, contentType: a.contentType ?? null, content: Buffer.from(a.content) })),
  };
}

/**
 * The claim failed. If another run holds a live lease (or held it and died), come back when the
 * lease ends; if the email is not due yet (a clock running ahead, a retry), come back when it is.
 * Recovery then never waits for the next sweep.
 */
async function rescheduleUnclaimed(deps: Deps, emailId: string): Promise<void> {
  const email = await deps.orm.em.findOne(Email, { id: emailId, status: { $in: ['queued', 'sending'] } }, { fields: ['id', 'status', 'leaseExpiresAt', 'sendAfter'] });
  if (!email) return;
  const comeBack = email.status === 'sending' ? email.leaseExpiresAt : email.sendAfter;
  if (comeBack) await enqueueSend(deps, { id: emailId, sendAfter: new Date(comeBack.getTime() + 1_000) });
}

/**
 * Writes the outcome only while this run still holds the claim (same status and attempt). A run
 * that outlived its lease must not undo what the run that took over has recorded.
 */
async function settle(tx: EntityManager, email: IEmail, changes: Partial<IEmail>): Promise<boolean> {
  const updated = await tx.nativeUpdate(Email, { id: email.id, status: 'sending', attempts: email.attempts }, changes);
  return updated === 1;
}

/**
 * Applies this attempt's per-recipient verdicts. Accepted and permanently refused recipients are
 * settled; those refused for now (SMTP 4xx) are owed another attempt, unless this was the last.
 * `email.sent` is recorded once, at the first acceptance; an email nobody accepted has failed.
 */
async function recordOutcome(deps: Deps, email: IEmail, result: SendResult): Promise<'sent' | 'retrying' | 'failed' | 'superseded'> {
  const now = deps.clock();
  const lastAttempt = email.attempts >= deps.config.POSTLANE_SEND_MAX_ATTEMPTS;
  const retryAt = nextAttemptAt(deps, email);
  const outcome = await deps.orm.em.transactional(async (tx) => {
    const recipients = await tx.find(EmailRecipient, { email: email.id });
    const verdicts = new Map(result.recipients.map((r) => [r.address.toLowerCase(), r]));
    for (const recipient of recipients.filter((r) => r.status === 'pending')) {
      const verdict = verdicts.get(recipient.address.toLowerCase());
      if (verdict?.accepted) recipient.status = 'accepted';
      else if (lastAttempt || (verdict && !verdict.transient)) recipient.status = 'rejected';
      if (verdict) recipient.response = verdict.response;
    }
    const stillOwed = recipients.filter((r) => r.status === 'pending');
    const accepted = recipients.some((r) => r.status === 'accepted');
    const firstAcceptance = accepted && email.sentAt == null;
    const acceptance = firstAcceptance ? { lastEvent: 'sent' as const, lastEventAt: now, providerMessageId: result.providerMessageId, sentAt: now } : {};
    const [changes, state] =
      stillOwed.length > 0
        ? [{ status: 'queued' as const, sendAfter: retryAt, lastError: stillOwed[0]!.response ?? null }, 'retrying' as const]
        : accepted
          ? [{ status: 'sent' as const, lastError: null }, 'sent' as const]
          : [{ status: 'failed' as const, lastEvent: 'failed' as const, lastEventAt: now, lastError: recipients[0]?.response ?? null }, 'failed' as const];
    if (!(await settle(tx, email, { ...changes, ...acceptance, leaseExpiresAt: null }))) return 'superseded' as const;
    if (firstAcceptance) {
      await emitEmailEvent(tx, email, 'email.sent', now);
      // The denominator of the bounce and complaint rates: emails the provider accepted.
      await countAccepted(tx, email, now);
    }
    if (state === 'failed') await emitEmailEvent(tx, email, 'email.failed', now);
    return state;
  });
  if (outcome === 'retrying') await enqueueSend(deps, { id: email.id, sendAfter: retryAt });
  return outcome;
}

function nextAttemptAt(deps: Deps, email: IEmail): Date {
  const delays = SEND_RETRY_DELAYS_SECONDS;
  return new Date(deps.clock().getTime() + delays[Math.min(email.attempts - 1, delays.length - 1)]! * 1000);
}

async function scheduleRetry(deps: Deps, email: IEmail, error: string): Promise<void> {
  const sendAfter = nextAttemptAt(deps, email);
  if (await settle(deps.orm.em, email, { status: 'queued', leaseExpiresAt: null, sendAfter, lastError: error })) await enqueueSend(deps, { id: email.id, sendAfter });
}

async function recordFailure(deps: Deps, email: IEmail, error: string): Promise<void> {
  const now = deps.clock();
  await deps.orm.em.transactional(async (tx) => {
    // Recipients that an earlier attempt reached keep the email's `sent` (or what came after it).
    const lastEvent = email.sentAt == null ? { lastEvent: 'failed' as const, lastEventAt: now } : {};
    if (!(await settle(tx, email, { status: 'failed', ...lastEvent, leaseExpiresAt: null, lastError: error }))) return;
    await emitEmailEvent(tx, email, 'email.failed', now, { error });
  });
}
