import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Event } from './event.entity.js';
import { Team } from './team.entity.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';

/**
 * The outbox row of one event for one endpoint: `pending → sending → delivered | retry | exhausted`,
 * claimed with a lease. Its id is the SDK's webhook event id.
 */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'retry', 'exhausted'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  uniques: [{ name: 'webhook_delivery_event_endpoint_unique', properties: ['event', 'endpoint'] }],
  indexes: [
    { name: 'webhook_delivery_listing_idx', properties: ['endpoint', 'createdAt', 'id'] },
    { name: 'webhook_delivery_due_idx', properties: ['endpoint', 'status', 'dueAt'] },
    { name: 'webhook_delivery_created_idx', properties: ['createdAt'] },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade'),
    /** No foreign key: event partitions are dropped whole; a delivery carries its own body. */
    event: () => p.manyToOne(Event).createForeignKeyConstraint(false),
    type: p.text(),
    /** Standard Webhooks message id: the same on every retry and replay of this event to this endpoint. */
    messageId: p.text(),
    /** The envelope, serialised once: exactly these bytes are signed and sent on every attempt. */
    body: p.text(),
    status: p.enum([...WEBHOOK_DELIVERY_STATUSES]),
    /** Counted attempts (a 429 with Retry-After is not one). */
    attempts: p.integer().default(0),
    /** Claimable from this time on. */
    dueAt: timestamp(),
    /** Start of the 24-hour window after which the delivery is dropped; a replay restarts it. */
    queuedAt: timestamp(),
    leaseExpiresAt: timestamp().nullable(),
    settledAt: timestamp().nullable(),
    lastStatusCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    updatedAt: timestamp()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export interface IWebhookDelivery extends InferEntity<typeof WebhookDelivery> {}
