import type * as v from 'valibot';
import { CREATED_AT, ID, LATER_AT, RECIPIENT, SENDER } from '../../examples.js';
import { EMAIL } from '../emails/emails.examples.js';
import type {
  WebhookAttemptSchema,
  WebhookEventListItemSchema,
  WebhookEventSchema,
  WebhookListItemSchema,
  WebhookSchema,
} from './webhooks.schemas.js';

export const SIGNING_SECRET = 'whsec_7nPQ1H0HsDCgvsXAXZ50ld3zEEEa1UqV+dB/5DexiHw=';

export const WEBHOOK_LIST_ITEM: v.InferInput<typeof WebhookListItemSchema> = {
  id: ID.webhook,
  endpoint: 'https://hooks.acme.dev/postlane',
  events: ['email.delivered', 'email.bounced', 'email.complained'],
  status: 'enabled',
  created_at: CREATED_AT,
};

export const WEBHOOK: v.InferInput<typeof WebhookSchema> = {
  object: 'webhook',
  ...WEBHOOK_LIST_ITEM,
  signing_secret: SIGNING_SECRET,
  previous_secret_expires_at: null,
};

export const WEBHOOK_REF = { object: 'webhook', id: ID.webhook } as const;

/** The example email's delivery, as sent to the example endpoint. */
export const WEBHOOK_EVENT_LIST_ITEM: v.InferInput<typeof WebhookEventListItemSchema> = {
  id: ID.webhookEvent,
  type: 'email.delivered',
  created_at: LATER_AT,
  status: 'success',
  delivery_status: 'delivered',
  message_id: 'msg_5b0f8e3c9a2d4e71b6c8f0a1d2e3f4a5',
  attempts: 1,
};

export const WEBHOOK_EVENT: v.InferInput<typeof WebhookEventSchema> = {
  object: 'webhook_event',
  ...WEBHOOK_EVENT_LIST_ITEM,
  next_attempt_at: null,
  payload: {
    type: 'email.delivered',
    created_at: LATER_AT,
    data: { email_id: ID.email, from: SENDER, to: [RECIPIENT.email], subject: EMAIL.subject, created_at: CREATED_AT },
  },
};

export const WEBHOOK_ATTEMPT: v.InferInput<typeof WebhookAttemptSchema> = {
  id: ID.webhookAttempt,
  http_status_code: 200,
  response: '{"received":true}',
  sent_at: LATER_AT,
  latency_ms: 84,
  error: null,
  counted: true,
};
