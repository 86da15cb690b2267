import { ApiKey } from './api-key.entity.js';
import { CapturedMessage } from './captured-message.entity.js';
import { EmailAttachment } from './email-attachment.entity.js';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { EmailEvent } from './email-event.entity.js';
import { EmailRecipient } from './email-recipient.entity.js';
import { Email } from './email.entity.js';
import { Team } from './team.entity.js';

export { ApiKey, CapturedMessage, Email, EmailAttachment, EmailEvent, EmailRecipient, IdempotencyKey, Team };
export type { IApiKey, ApiKeyPermission } from './api-key.entity.js';
export type { ICapturedMessage } from './captured-message.entity.js';
export type { IEmail, EmailStatus, EmailLastEvent } from './email.entity.js';
export type { IEmailAttachment } from './email-attachment.entity.js';
export type { IEmailEvent } from './email-event.entity.js';
export type { IEmailRecipient } from './email-recipient.entity.js';
export type { ITeam } from './team.entity.js';

export const entities = [Team, ApiKey, Email, EmailRecipient, EmailAttachment, EmailEvent, CapturedMessage, IdempotencyKey];
