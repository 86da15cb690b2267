import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';

/** One HTTP request of a delivery (`createdAt` is when it was sent). */
export const WebhookAttempt = defineEntity({
  name: 'WebhookAttempt',
  indexes: [{ name: 'webhook_attempt_listing_idx', properties: ['delivery', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    delivery: () => p.manyToOne(WebhookDelivery).deleteRule('cascade'),
    /** Null when no response came (timeout, refused connection, blocked address). */
    statusCode: p.integer().nullable(),
    latencyMs: p.integer(),
    /** `timeout`, `connection`, `blocked`, `redirect`, `http_status`, `rate_limited`; null on success. */
    errorClass: p.text().nullable(),
    /** The start of the response body (at most 1 KiB). */
    response: p.text(),
    /** False for a 429 honoured through Retry-After, which does not use up an attempt. */
    counted: p.boolean(),
  },
});

export interface IWebhookAttempt extends InferEntity<typeof WebhookAttempt> {}
