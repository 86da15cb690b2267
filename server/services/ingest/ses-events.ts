import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { Email, Event, type IEmail } from '../../entities/index.js';
import { parseMailbox } from '../../mail/address.js';
import { EMAIL_ID_TAG } from '../../providers/ses.provider.js';
import { recordEmailEvent } from '../emails/record-email-event.js';
import { addSuppressions } from '../suppressions/add-suppression.js';
import { recordClick, recordOpen } from '../tracking/record-tracking.js';

/** The parts of an SES event (event publishing's `eventType`, or an identity notification's `notificationType`) we read. */
export interface SesEvent {
  eventType?: string;
  notificationType?: string;
  mail?: { messageId?: string; timestamp?: string; tags?: Record<string, string[]> };
  bounce?: { bounceType?: string; bounceSubType?: string; timestamp?: string; bouncedRecipients?: { emailAddress?: string; diagnosticCode?: string; status?: string }[] };
  complaint?: { timestamp?: string; complainedRecipients?: { emailAddress?: string }[]; complaintFeedbackType?: string };
  delivery?: { timestamp?: string };
  deliveryDelay?: { timestamp?: string; delayType?: string };
  open?: { timestamp?: string; ipAddress?: string; userAgent?: string };
  click?: { timestamp?: string; ipAddress?: string; userAgent?: string; link?: string };
  reject?: { reason?: string };
  failure?: { errorMessage?: string };
}

/** A transient or undetermined bounce: kept in the email's history, never delivered (the spec's email.bounced is a hard bounce). */
export const SOFT_BOUNCE_EVENT = 'email.soft_bounced';

/** By our `email_id` tag, else by SES's MessageId (a message sent before tagging, or an identity notification without tags). */
async function findEmail(tx: EntityManager, event: SesEvent): Promise<IEmail | null> {
  const tagged = event.mail?.tags?.[EMAIL_ID_TAG]?.[0];
  if (tagged && isUuid(tagged)) {
    const email = await tx.findOne(Email, { id: tagged });
    if (email) return email;
  }
  const messageId = event.mail?.messageId;
  return messageId ? tx.findOne(Email, { providerMessageId: messageId }) : null;
}

/** When the thing happened, by SES's clock; the mail's own time, then now, when the part has none. */
function timeOf(deps: Deps, ...candidates: (string | undefined)[]): Date {
  for (const candidate of candidates) {
    const at = candidate ? new Date(candidate) : null;
    if (at && !Number.isNaN(at.getTime())) return at;
  }
  return deps.clock();
}

/** `data.bounce` as Resend sends it. */
export function bounceData(bounce: NonNullable<SesEvent['bounce']>) {
  const diagnosticCode = (bounce.bouncedRecipients ?? []).map((r) => r.diagnosticCode).filter((code): code is string => !!code);
  return {
    type: bounce.bounceType ?? 'Undetermined',
    subType: bounce.bounceSubType ?? 'General',
    message: diagnosticCode[0] ?? `The message bounced (${bounce.bounceType ?? 'Undetermined'}, ${bounce.bounceSubType ?? 'General'}).`,
    diagnosticCode,
  };
}

const recipientsOf = (list: { emailAddress?: string }[] | undefined) => (list ?? []).map((r) => r.emailAddress).filter((address): address is string => !!address);

/**
 * Applies one SES event to its email in the caller's transaction (the one that records the SNS
 * MessageId), through recordEmailEvent so `last_event` moves by event time and webhook deliveries
 * are outbox rows. Returns what it did, for the log; an event for no email of ours does nothing.
 */
export async function applySesEvent(deps: Deps, tx: EntityManager, event: SesEvent): Promise<string> {
  const kind = event.eventType ?? event.notificationType;
  const email = await findEmail(tx, event);
  if (!email) return 'no matching email';
  const mailAt = event.mail?.timestamp;
  switch (kind) {
    case 'Send': {
      // The send job records email.sent when SES accepts; this covers a send whose result was never written.
      if (email.status === 'queued' || email.status === 'sending' || (await tx.count(Event, { email: email.id, type: 'email.sent' })) > 0) return 'already sent';
      await recordEmailEvent(deps, tx, email, 'email.sent', timeOf(deps, mailAt));
      return 'email.sent';
    }
    case 'Delivery':
      await recordEmailEvent(deps, tx, email, 'email.delivered', timeOf(deps, event.delivery?.timestamp, mailAt));
      return 'email.delivered';
    case 'DeliveryDelay':
      await recordEmailEvent(deps, tx, email, 'email.delivery_delayed', timeOf(deps, event.deliveryDelay?.timestamp, mailAt));
      return 'email.delivery_delayed';
    case 'Bounce': {
      const bounce = event.bounce ?? {};
      const at = timeOf(deps, bounce.timestamp, mailAt);
      if (bounce.bounceType !== 'Permanent') {
        await recordEmailEvent(deps, tx, email, SOFT_BOUNCE_EVENT, at, { bounce: bounceData(bounce) });
        return SOFT_BOUNCE_EVENT;
      }
      await recordEmailEvent(deps, tx, email, 'email.bounced', at, { bounce: bounceData(bounce) });
      await suppress(deps, tx, email, recipientsOf(bounce.bouncedRecipients), 'bounce');
      return 'email.bounced';
    }
    case 'Complaint': {
      const complaint = event.complaint ?? {};
      await recordEmailEvent(deps, tx, email, 'email.complained', timeOf(deps, complaint.timestamp, mailAt));
      await suppress(deps, tx, email, recipientsOf(complaint.complainedRecipients), 'complaint');
      return 'email.complained';
    }
    // SES's own tracking, judged by the same machine rules as Postlane's pixel and links; SES
    // rewrote the links, so how many there are (the burst rule) is unknown.
    case 'Open': {
      const open = event.open ?? {};
      return `email.${await recordOpen(deps, tx, email, { ipAddress: open.ipAddress ?? null, userAgent: open.userAgent ?? null, timestamp: timeOf(deps, open.timestamp, mailAt) })}`;
    }
    case 'Click': {
      const click = event.click ?? {};
      return `email.${await recordClick(deps, tx, email, { link: click.link ?? '', ipAddress: click.ipAddress ?? null, userAgent: click.userAgent ?? null, timestamp: timeOf(deps, click.timestamp, mailAt) })}`;
    }
    case 'Reject':
    case 'Rendering Failure': {
      // The spec has no email.failed webhook: recorded, `last_event` failed, nothing delivered.
      const error = kind === 'Reject' ? `SES rejected the message: ${event.reject?.reason ?? 'no reason given'}` : `SES could not render the message: ${event.failure?.errorMessage ?? ''}`;
      await recordEmailEvent(deps, tx, email, 'email.failed', timeOf(deps, mailAt), { error });
      return 'email.failed';
    }
    default:
      return `ignored ${kind ?? 'unknown'} event`;
  }
}

/** Stored addresses were accepted by the strict parser, so they parse again. */
const addressOf = (formatted: string) => {
  const mailbox = parseMailbox(formatted);
  return typeof mailbox === 'string' ? formatted : mailbox.address;
};

/** Only the email's own recipients: a notification cannot suppress an address the email was not sent to. */
export async function suppress(deps: Deps, tx: EntityManager, email: IEmail, addresses: string[], origin: 'bounce' | 'complaint') {
  const own = new Set([...email.to, ...email.cc, ...email.bcc].map((formatted) => addressOf(formatted).toLowerCase()));
  const emails = addresses.map((address) => address.toLowerCase()).filter((address) => own.has(address));
  if (emails.length > 0) await addSuppressions(deps, tx, { teamId: email.team.id, emails, origin, source: null, sourceId: email.id });
}
