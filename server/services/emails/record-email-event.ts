import type { EntityManager } from '@mikro-orm/postgresql';
import { Email, type EmailFacts, type EmailLastEvent } from '../../entities/index.js';
import type { JudgeDeps } from '../deliverability/judge-team.js';
import { recordDeliverabilityOutcome } from '../deliverability/record-outcome.js';
import { type AlongsideWrite, emitEvent, emitEvents } from '../events/emit-event.js';

/** The `last_event` each email event leaves behind; `email.prefetched` leaves it alone. */
const LAST_EVENT_OF: Readonly<Record<string, EmailLastEvent>> = {
  'email.sent': 'sent',
  'email.delivered': 'delivered',
  'email.delivery_delayed': 'delivery_delayed',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.failed': 'failed',
};

/** The email fields in the `data` of every email event, as Resend sends them. */
function emailEventData(email: EmailFacts): Record<string, unknown> {
  return {
    email_id: email.id,
    created_at: email.createdAt.toISOString(),
    from: email.from,
    to: email.to,
    subject: email.subject,
    message_id: email.messageId,
    ...(email.broadcastId ? { broadcast_id: email.broadcastId } : {}),
    tags: Object.fromEntries(email.tags.map((tag) => [tag.name, tag.value])),
  };
}

/**
 * Records the event alone, for a caller that writes `last_event` in its own update of the row
 * (the send job settles status and `last_event` in one statement). `extra` adds to `data`, such
 * as `bounce`, `open` or `click`.
 */
export function emitEmailEvent(
  tx: EntityManager,
  email: EmailFacts,
  type: string,
  at: Date,
  extra: Record<string, unknown> = {},
) {
  return emitEvent(tx, {
    teamId: email.team.id,
    emailId: email.id,
    type,
    createdAt: at,
    data: { ...emailEventData(email), ...extra },
  });
}

/**
 * emitEmailEvent for many events at once (the outcomes of a batch of sends), in the caller's
 * transaction; `alongside` is a write of the caller's sharing the first statement (emitEvents).
 */
export function emitEmailEvents(
  tx: EntityManager,
  items: readonly { email: EmailFacts; type: string; at: Date; extra?: Record<string, unknown> }[],
  alongside?: AlongsideWrite,
) {
  return emitEvents(
    tx,
    items.map(({ email, type, at, extra }) => ({
      teamId: email.team.id,
      emailId: email.id,
      type,
      createdAt: at,
      data: { ...emailEventData(email), ...extra },
    })),
    alongside,
  );
}

/**
 * Records something that happened to a sent email (delivered, bounced, opened…): the event with
 * its webhook deliveries and the email's `last_event`, in the caller's transaction. Providers
 * report out of order (a Delivery after the Open it allowed), so `last_event` follows the newest
 * `at`, not the latest arrival. A bounce or complaint also counts toward the team's deliverability
 * rates and has the team judged against its lines, in the same transaction.
 */
export async function recordEmailEvent(
  deps: JudgeDeps,
  tx: EntityManager,
  email: EmailFacts,
  type: string,
  at: Date,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const lastEvent = LAST_EVENT_OF[type];
  if (lastEvent)
    await tx.nativeUpdate(
      Email,
      { id: email.id, $or: [{ lastEventAt: null }, { lastEventAt: { $lte: at } }] },
      { lastEvent, lastEventAt: at },
    );
  await recordDeliverabilityOutcome(deps, tx, email, type, at, extra);
  await emitEmailEvent(tx, email, type, at, extra);
}
