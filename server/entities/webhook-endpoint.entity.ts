import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/** A team's webhook receiver: where events go, which ones, and the secrets that sign them. */
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  indexes: [{ name: 'webhook_endpoint_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    url: p.text(),
    /** Event type names; `*` stands for every event Postlane emits except the opt-in `email.prefetched`. */
    events: p.array().columnType('text[]'),
    status: p.enum([...WEBHOOK_ENDPOINT_STATUSES]),
    /** The signing secret, sealed with `webhook:<id>` as context. */
    secret: p.text(),
    /** The secret before the last rotation, still signing until `previousSecretExpiresAt`. */
    previousSecret: p.text().nullable(),
    previousSecretExpiresAt: timestamp().nullable(),
    /** Exhausted deliveries since the last success: 10 emails the owners, 20 disables the endpoint. */
    consecutiveExhausted: p.integer().default(0),
    disabledAt: timestamp().nullable(),
    /** Held by the one worker draining this endpoint, so its concurrency and rate caps hold across processes. */
    drainLeaseExpiresAt: timestamp().nullable(),
    /** When the owners were last told about an old backlog (at most daily). */
    backlogNoticeAt: timestamp().nullable(),
    updatedAt: timestamp()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export interface IWebhookEndpoint extends InferEntity<typeof WebhookEndpoint> {}
