import { ApiKey } from './api-key.entity.js';
import { CapturedMessage } from './captured-message.entity.js';
import { Domain } from './domain.entity.js';
import { EmailAttachment } from './email-attachment.entity.js';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { EmailRecipient } from './email-recipient.entity.js';
import { Email } from './email.entity.js';
import { Event } from './event.entity.js';
import { Team } from './team.entity.js';

export { ApiKey, CapturedMessage, Domain, Email, EmailAttachment, EmailRecipient, Event, IdempotencyKey, Team };
export type { IApiKey, ApiKeyPermission } from './api-key.entity.js';
export type { ICapturedMessage } from './captured-message.entity.js';
export type { IDomain, DomainRecord, DomainStatus, RecordStatus } from './domain.entity.js';
export type { IEmail, EmailStatus, EmailLastEvent } from './email.entity.js';
export type { IEmailAttachment } from './email-attachment.entity.js';
export type { IEmailRecipient } from './email-recipient.entity.js';
export type { IEvent } from './event.entity.js';
export type { ITeam } from './team.entity.js';

export const entities = [Team, Domain, ApiKey, Email, EmailRecipient, EmailAttachment, Event, CapturedMessage, IdempotencyKey];
