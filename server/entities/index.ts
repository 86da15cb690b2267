import { ApiKey } from './api-key.entity.js';
import { ApiLog } from './api-log.entity.js';
import { CapturedMessage } from './captured-message.entity.js';
import { EmailAttachment } from './email-attachment.entity.js';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { EmailRecipient } from './email-recipient.entity.js';
import { Email } from './email.entity.js';
import { Event } from './event.entity.js';
import { Suppression } from './suppression.entity.js';
import { Team } from './team.entity.js';
import { Template } from './template.entity.js';
import { QuotaNotice, RateLimitWindow, TeamDailyUsage } from './usage.entity.js';

export { ApiKey, ApiLog, CapturedMessage, Email, EmailAttachment, EmailRecipient, Event, IdempotencyKey, QuotaNotice, RateLimitWindow, Suppression, Team, TeamDailyUsage, Template };
export type { IApiKey, ApiKeyPermission } from './api-key.entity.js';
export type { IApiLog } from './api-log.entity.js';
export type { ICapturedMessage } from './captured-message.entity.js';
export type { IEmail, EmailStatus, EmailLastEvent } from './email.entity.js';
export type { IEmailAttachment } from './email-attachment.entity.js';
export type { IEmailRecipient } from './email-recipient.entity.js';
export type { IEvent } from './event.entity.js';
export type { ISuppression, SuppressionOrigin } from './suppression.entity.js';
export type { ITeam } from './team.entity.js';
export type { ITemplate, TemplateVariable, TemplateVariableType, TemplateVersion } from './template.entity.js';
export type { ITeamDailyUsage } from './usage.entity.js';

export const entities = [Team, ApiKey, Email, EmailRecipient, EmailAttachment, Event, CapturedMessage, IdempotencyKey, Suppression, ApiLog, TeamDailyUsage, QuotaNotice, RateLimitWindow, Template];
