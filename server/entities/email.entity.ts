import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

/** Where the outbox row is in its life: the send job moves it, the sweeper watches `queued` and `sending`. */
export const EMAIL_STATUSES = ['queued', 'sending', 'sent', 'failed', 'canceled'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/** The wire's `last_event`. */
export const EMAIL_LAST_EVENTS = [
  'queued',
  'scheduled',
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'complained',
  'opened',
  'clicked',
  'canceled',
  'failed',
  'suppressed',
] as const;
export type EmailLastEvent = (typeof EMAIL_LAST_EVENTS)[number];

const addresses = () => p.array().columnType('text[]');

export const Email = defineEntity({
  name: 'Email',
  indexes: [
    { name: 'email_team_listing_idx', properties: ['team', 'createdAt', 'id'] },
    { name: 'email_outbox_idx', properties: ['status', 'sendAfter'] },
    { name: 'email_broadcast_idx', properties: ['broadcastId', 'status', 'attempts'] },
    // The drain's claim of due emails, and the release of expired leases (partial: only unsettled rows).
    {
      name: 'email_due_idx',
      expression: `create index "email_due_idx" on "email" ("region", "send_after") where status = 'queued'`,
    },
    {
      name: 'email_lease_idx',
      expression: `create index "email_lease_idx" on "email" ("region", "lease_expires_at") where status = 'sending'`,
    },
    // Provider events that lack our email_id tag are matched by the provider's message id.
    { name: 'email_provider_message_id_idx', properties: ['providerMessageId'] },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    from: p.text(),
    to: addresses(),
    cc: addresses(),
    bcc: addresses(),
    replyTo: addresses(),
    subject: p.text(),
    html: p.text().nullable(),
    text: p.text().nullable(),
    /** Custom headers, as allowed by the header rules, added to the message as given. */
    headers: p.json<Record<string, string>>().defaultRaw(`'{}'`),
    tags: p.json<{ name: string; value: string }[]>().defaultRaw(`'[]'`),
    // `raw_mime` (bytea, null for API sends), the message as submitted over SMTP, is not mapped: only
    // the outbox writer and the drain's claim read and write it, in SQL, so no entity load carries it.
    // Nor are `deferred_domains` and `deferred_groups` (text[], null unless queued after a deferral):
    // where the mail waits to go, written by settling and read by the queue commands, in SQL.
    /** The subscription topic the email belongs to: it scopes the unsubscribe link and the opt-out check. */
    topicId: p.uuid().nullable(),
    /** The broadcast this email is one recipient's copy of. */
    broadcastId: p.uuid().nullable(),
    region: p.text(),
    /** Our own Message-ID, stored before sending so a duplicate from the at-least-once window is recognisable. */
    messageId: p.text(),
    status: p.enum([...EMAIL_STATUSES]),
    lastEvent: p.enum([...EMAIL_LAST_EVENTS]),
    /** When the event behind `lastEvent` happened; null while the email has not been sent. */
    lastEventAt: timestamp().nullable(),
    /** The send job claims the row only from this time on (scheduling and retry backoff). */
    sendAfter: timestamp(),
    scheduledAt: timestamp().nullable(),
    leaseExpiresAt: timestamp().nullable(),
    attempts: p.integer().default(0),
    providerMessageId: p.text().nullable(),
    lastError: p.text().nullable(),
    sentAt: timestamp().nullable(),
    updatedAt: timestamp()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export interface IEmail extends InferEntity<typeof Email> {}

/**
 * What events and outcomes read of an email: a loaded entity, or the drain's plain copy of a
 * claimed row (mapping a batch into managed entities cost the drain more than sending it).
 */
export type EmailFacts = Pick<
  IEmail,
  'id' | 'createdAt' | 'from' | 'to' | 'subject' | 'messageId' | 'broadcastId' | 'tags' | 'region'
> & { team: { id: string } };
