import type { IWebhookAttempt, IWebhookDelivery, IWebhookEndpoint } from '../../../entities/index.js';
import type { WebhookWithSecret } from '../../../services/webhooks/get-webhook.js';

export const presentCreatedWebhook = ({ endpoint, signingSecret }: WebhookWithSecret) => ({
  object: 'webhook' as const,
  id: endpoint.id,
  signing_secret: signingSecret,
});

export const presentWebhookListItem = (endpoint: IWebhookEndpoint) => ({
  id: endpoint.id,
  endpoint: endpoint.url,
  events: endpoint.events,
  status: endpoint.status,
  created_at: endpoint.createdAt.toISOString(),
});

/** The previous secret's expiry only while it still signs. */
const previousSecretExpiry = (endpoint: IWebhookEndpoint, now: Date) =>
  endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now
    ? endpoint.previousSecretExpiresAt.toISOString()
    : null;

export const presentWebhook = ({ endpoint, signingSecret }: WebhookWithSecret, now: Date) => ({
  object: 'webhook' as const,
  ...presentWebhookListItem(endpoint),
  signing_secret: signingSecret,
  previous_secret_expires_at: previousSecretExpiry(endpoint, now),
});

export const presentRotatedWebhook = ({ endpoint, signingSecret }: WebhookWithSecret, now: Date) => ({
  object: 'webhook' as const,
  id: endpoint.id,
  signing_secret: signingSecret,
  previous_secret_expires_at: previousSecretExpiry(endpoint, now),
});

export const presentWebhookRef = (endpoint: IWebhookEndpoint) => ({ object: 'webhook' as const, id: endpoint.id });
export const presentDeletedWebhook = (endpoint: IWebhookEndpoint) => ({
  object: 'webhook' as const,
  id: endpoint.id,
  deleted: true as const,
});

/** Resend's event statuses: delivered is success, exhausted is failed, a retry under way is attempting. */
function eventStatus(delivery: IWebhookDelivery) {
  if (delivery.status === 'delivered') return 'success' as const;
  if (delivery.status === 'exhausted') return 'failed' as const;
  return delivery.status === 'pending' && delivery.attempts === 0 ? ('pending' as const) : ('attempting' as const);
}

export const presentWebhookEventListItem = (delivery: IWebhookDelivery) => ({
  id: delivery.id,
  type: delivery.type,
  created_at: delivery.createdAt.toISOString(),
  status: eventStatus(delivery),
  delivery_status: delivery.status,
  message_id: delivery.messageId,
  attempts: delivery.attempts,
});

export const presentWebhookEvent = (delivery: IWebhookDelivery) => ({
  object: 'webhook_event' as const,
  ...presentWebhookEventListItem(delivery),
  next_attempt_at: delivery.status === 'pending' || delivery.status === 'retry' ? delivery.dueAt.toISOString() : null,
  payload: JSON.parse(delivery.body) as Record<string, unknown>,
});

export const presentWebhookEventRef = (delivery: IWebhookDelivery) => ({
  object: 'webhook_event' as const,
  id: delivery.id,
});

export const presentWebhookAttempt = (attempt: IWebhookAttempt) => ({
  id: attempt.id,
  http_status_code: attempt.statusCode ?? null,
  response: attempt.response,
  sent_at: attempt.createdAt.toISOString(),
  latency_ms: attempt.latencyMs,
  error: attempt.errorClass ?? null,
  counted: attempt.counted,
});
