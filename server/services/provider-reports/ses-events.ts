import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { Email, Event, type IEmail } from '../../entities/index.js';
import { EMAIL_ID_TAG } from '../../providers/ses.provider.js';
import { recordEmailEvent } from '../emails/record-email-event.js';
import { recordClick, recordOpen } from '../tracking/record-tracking.js';
import { type BounceReport, bounceData, recordProviderOutcome, SOFT_BOUNCE_EVENT } from './record-provider-outcome.js';

/** The parts of an SES event (event publishing's `eventType`, or an identity notification's `notificationType`) we read. */
export interface SesEvent {
  eventType?: string;
  notificationType?: string;
  mail?: { messageId?: string; timestamp?: string; tags?: Record<string, string[]> };
  bounce?: BounceReport & { timestamp?: string };
  complaint?: {
    timestamp?: string;
    complainedRecipients?: { emailAddress?: string }[];
    complaintFeedbackType?: string;
  };
  delivery?: { timestamp?: string };
  deliveryDelay?: { timestamp?: string; delayType?: string };
  open?: { timestamp?: string; ipAddress?: string; userAgent?: string };
  click?: { timestamp?: string; ipAddress?: string; userAgent?: string; link?: string };
  reject?: { reason?: string };
  failure?: { errorMessage?: string };
}

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

const recipientsOf = (list: { emailAddress?: string }[] | undefined) =>
  (list ?? []).map((r) => r.emailAddress).filter((address): address is string => !!address);

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
      if (
        email.status === 'queued' ||
        email.status === 'sending' ||
        (await tx.count(Event, { email: email.id, type: 'email.sent' })) > 0
      )
        return 'already sent';
      await recordEmailEvent(deps, tx, email, 'email.sent', timeOf(deps, mailAt));
      return 'email.sent';
    }
    case 'Delivery':
      await recordEmailEvent(deps, tx, email, 'email.delivered', timeOf(deps, event.delivery?.timestamp, mailAt));
      return 'email.delivered';
    case 'DeliveryDelay':
      await recordEmailEvent(
        deps,
        tx,
        email,
        'email.delivery_delayed',
        timeOf(deps, event.deliveryDelay?.timestamp, mailAt),
      );
      return 'email.delivery_delayed';
    case 'Bounce': {
      const bounce = event.bounce ?? {};
      const at = timeOf(deps, bounce.timestamp, mailAt);
      if (bounce.bounceType !== 'Permanent') {
        await recordEmailEvent(deps, tx, email, SOFT_BOUNCE_EVENT, at, { bounce: bounceData(bounce) });
        return SOFT_BOUNCE_EVENT;
      }
      return recordProviderOutcome(
        deps,
        tx,
        email,
        'email.bounced',
        at,
        { bounce: bounceData(bounce) },
        recipientsOf(bounce.bouncedRecipients),
      );
    }
    case 'Complaint': {
      const complaint = event.complaint ?? {};
      return recordProviderOutcome(
        deps,
        tx,
        email,
        'email.complained',
        timeOf(deps, complaint.timestamp, mailAt),
        {},
        recipientsOf(complaint.complainedRecipients),
      );
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
      const error =
        kind === 'Reject'
          ? `SES rejected the message: ${event.reject?.reason ?? 'no reason given'}`
          : `SES could not render the message: ${event.failure?.errorMessage ?? ''}`;
      await recordEmailEvent(deps, tx, email, 'email.failed', timeOf(deps, mailAt), { error });
      return 'email.failed';
    }
    default:
      return `ignored ${kind ?? 'unknown'} event`;
  }
}
