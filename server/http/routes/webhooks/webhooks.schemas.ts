import * as v from 'valibot';
import { WEBHOOK_DELIVERY_STATUSES } from '../../../entities/webhook-delivery.entity.js';
import { WEBHOOK_ENDPOINT_STATUSES } from '../../../entities/webhook-endpoint.entity.js';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../../services/webhooks/event-types.js';
import { DEFAULT_OVERLAP_HOURS } from '../../../services/webhooks/rotate-webhook-secret.js';
import { isSigningSecret, SECRET_SHAPE_MESSAGE } from '../../../webhooks/signing.js';
import { TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const EndpointUrlSchema = v.pipe(
  v.string(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.url('must be an http or https URL'),
);

const EventsSchema = v.pipe(
  v.array(v.picklist(SUBSCRIBABLE_EVENT_TYPES, 'must be an event type such as email.sent, or * for every event')),
  v.minLength(1, 'must name at least one event type'),
);

/** The exact message of the spec, whatever field order the body has. */
const secretCheck = <T extends { signing_secret?: string }>() =>
  v.check<T, string>(
    (body) => body.signing_secret === undefined || isSigningSecret(body.signing_secret),
    SECRET_SHAPE_MESSAGE,
  );

export const CreateWebhookBodySchema = v.pipe(
  v.strictObject({ endpoint: EndpointUrlSchema, events: EventsSchema, signing_secret: v.optional(v.string()) }),
  secretCheck(),
  v.metadata({ title: 'CreateWebhookRequest' }),
);

export const UpdateWebhookBodySchema = v.pipe(
  v.strictObject({
    endpoint: v.optional(EndpointUrlSchema),
    events: v.optional(EventsSchema),
    status: v.optional(v.picklist(WEBHOOK_ENDPOINT_STATUSES, 'must be enabled or disabled')),
  }),
  v.metadata({ title: 'UpdateWebhookRequest' }),
);

export const RotateWebhookBodySchema = v.pipe(
  v.strictObject({
    overlap_hours: v.optional(
      v.pipe(
        v.number('must be a whole number of hours'),
        v.integer('must be a whole number of hours'),
        v.minValue(0, 'must be 0 to 72'),
        v.maxValue(72, 'must be 0 to 72'),
      ),
      DEFAULT_OVERLAP_HOURS,
    ),
    signing_secret: v.optional(v.string()),
  }),
  secretCheck(),
  v.metadata({ title: 'RotateWebhookSecretRequest' }),
);

export const WebhookEventParamsSchema = v.object({ id: UuidSchema, event_id: UuidSchema });

export const CreatedWebhookSchema = v.pipe(
  v.object({ object: v.literal('webhook'), id: UuidSchema, signing_secret: v.string() }),
  v.metadata({ title: 'CreatedWebhook' }),
);

const webhookFields = {
  id: UuidSchema,
  endpoint: v.string(),
  events: v.array(v.string()),
  status: v.picklist(WEBHOOK_ENDPOINT_STATUSES),
  created_at: TimestampSchema,
};

export const WebhookListItemSchema = v.pipe(
  v.object(webhookFields),
  v.metadata({ title: 'WebhookListItem', description: 'List rows never carry the signing secret.' }),
);

export const WebhookSchema = v.pipe(
  v.object({
    object: v.literal('webhook'),
    ...webhookFields,
    signing_secret: v.string(),
    previous_secret_expires_at: v.nullable(TimestampSchema),
  }),
  v.metadata({ title: 'Webhook' }),
);

export const RotatedWebhookSchema = v.pipe(
  v.object({
    object: v.literal('webhook'),
    id: UuidSchema,
    signing_secret: v.string(),
    previous_secret_expires_at: v.nullable(TimestampSchema),
  }),
  v.metadata({ title: 'RotatedWebhook' }),
);

export const WebhookRefSchema = v.object({ object: v.literal('webhook'), id: UuidSchema });
export const DeletedWebhookSchema = v.object({
  object: v.literal('webhook'),
  id: UuidSchema,
  deleted: v.literal(true),
});

const EVENT_STATUSES = ['success', 'pending', 'failed', 'attempting'] as const;

const webhookEventFields = {
  id: UuidSchema,
  type: v.string(),
  created_at: TimestampSchema,
  status: v.picklist(EVENT_STATUSES),
  delivery_status: v.picklist(WEBHOOK_DELIVERY_STATUSES),
  message_id: v.string(),
  attempts: v.number(),
};

export const WebhookEventListItemSchema = v.pipe(
  v.object(webhookEventFields),
  v.metadata({ title: 'WebhookEventListItem' }),
);

export const WebhookEventSchema = v.pipe(
  v.object({
    object: v.literal('webhook_event'),
    ...webhookEventFields,
    next_attempt_at: v.nullable(TimestampSchema),
    payload: v.record(v.string(), v.unknown()),
  }),
  v.metadata({
    title: 'WebhookEvent',
    description: 'One event as delivered to one endpoint; payload is the exact envelope sent.',
  }),
);

export const WebhookEventRefSchema = v.object({ object: v.literal('webhook_event'), id: UuidSchema });

export const WebhookAttemptSchema = v.pipe(
  v.object({
    id: UuidSchema,
    http_status_code: v.nullable(v.number()),
    response: v.string(),
    sent_at: TimestampSchema,
    latency_ms: v.number(),
    error: v.nullable(v.string()),
    counted: v.boolean(),
  }),
  v.metadata({
    title: 'WebhookAttempt',
    description: 'http_status_code is null when no response came; response holds the first KiB of the body.',
  }),
);
