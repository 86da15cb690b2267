import { ApiKey } from './api-key.entity.js';
import { CapturedMessage } from './captured-message.entity.js';
import { EmailAttachment } from './email-attachment.entity.js';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { EmailRecipient } from './email-recipient.entity.js';
import { Email } from './email.entity.js';
import { Event } from './event.entity.js';
import { Team } from './team.entity.js';
import { WebhookAttempt } from './webhook-attempt.entity.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';

export { ApiKey, CapturedMessage, Email, EmailAttachment, EmailRecipient, Event, IdempotencyKey, Team, WebhookAttempt, WebhookDelivery, WebhookEndpoint };
export type { IApiKey, ApiKeyPermission } from './api-key.entity.js';
export type { ICapturedMessage } from './captured-message.entity.js';
export type { IEmail, EmailStatus, EmailLastEvent } from './email.entity.js';
export type { IEmailAttachment } from './email-attachment.entity.js';
export type { IEmailRecipient } from './email-recipient.entity.js';
export type { IEvent } from './event.entity.js';
export type { ITeam } from './team.entity.js';
export type { IWebhookAttempt } from './webhook-attempt.entity.js';
export type { IWebhookDelivery, WebhookDeliveryStatus } from './webhook-delivery.entity.js';
export type { IWebhookEndpoint, WebhookEndpointStatus } from './webhook-endpoint.entity.js';

export const entities = [Team, ApiKey, Email, EmailRecipient, EmailAttachment, Event, CapturedMessage, IdempotencyKey, WebhookEndpoint, WebhookDelivery, WebhookAttempt];
