import { ApiKey } from './api-key.entity.js';
import { Automation, AutomationRun, AutomationRunStep, AutomationVersion } from './automation.entity.js';
import { CustomEvent, CustomEventRecord } from './custom-event.entity.js';
import { ApiLog } from './api-log.entity.js';
import { Broadcast } from './broadcast.entity.js';
import { CapturedMessage } from './captured-message.entity.js';
import { ContactImport, ContactImportChunk, ContactImportError } from './contact-import.entity.js';
import { ContactProperty } from './contact-property.entity.js';
import { ContactTopic } from './contact-topic.entity.js';
import { Contact } from './contact.entity.js';
import { DeliverabilityDay, DeliverabilityEpisode, RegionBroadcastPause } from './deliverability.entity.js';
import { Domain } from './domain.entity.js';
import { DomainClaim } from './domain-claim.entity.js';
import { EmailAttachment } from './email-attachment.entity.js';
import { ErasureRequest } from './erasure-request.entity.js';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IngestedNotification } from './ingested-notification.entity.js';
import { MtaStsPolicy } from './mta-sts-policy.entity.js';
import { EmailRecipient } from './email-recipient.entity.js';
import { EmailTracking, TrackingClick } from './email-tracking.entity.js';
import { Email } from './email.entity.js';
import { Event } from './event.entity.js';
import { SegmentMember } from './segment-member.entity.js';
import { ShapingState } from './shaping-state.entity.js';
import { Segment } from './segment.entity.js';
import { Suppression } from './suppression.entity.js';
import { Team } from './team.entity.js';
import { Template } from './template.entity.js';
import { Topic } from './topic.entity.js';
import { ReceivedAttachment, ReceivedEmail } from './received-email.entity.js';
import { QuotaNotice, RateLimitWindow, TeamDailyUsage } from './usage.entity.js';
import { WebhookAttempt } from './webhook-attempt.entity.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';

export {
  ApiKey,
  Automation,
  AutomationRun,
  AutomationRunStep,
  AutomationVersion,
  CustomEvent,
  CustomEventRecord,
  ApiLog,
  Broadcast,
  CapturedMessage,
  Contact,
  ContactImport,
  ContactImportChunk,
  ContactImportError,
  ContactProperty,
  ContactTopic,
  DeliverabilityDay,
  DeliverabilityEpisode,
  Domain,
  DomainClaim,
  Email,
  EmailAttachment,
  EmailRecipient,
  EmailTracking,
  ErasureRequest,
  Event,
  IdempotencyKey,
  IngestedNotification,
  MtaStsPolicy,
  ShapingState,
  QuotaNotice,
  RateLimitWindow,
  ReceivedAttachment,
  ReceivedEmail,
  RegionBroadcastPause,
  Segment,
  SegmentMember,
  Suppression,
  Team,
  TeamDailyUsage,
  Template,
  Topic,
  TrackingClick,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
};
export type { IApiKey, ApiKeyPermission } from './api-key.entity.js';
export type { ContactImportStatus, IContactImport } from './contact-import.entity.js';
export type { IApiLog } from './api-log.entity.js';
export type {
  AutomationStatus,
  IAutomation,
  IAutomationRun,
  IAutomationRunStep,
  IAutomationVersion,
  RunStatus,
  RunStepStatus,
} from './automation.entity.js';
export type { EventSchemaMap, EventSchemaType, ICustomEvent, ICustomEventRecord } from './custom-event.entity.js';
export { EVENT_SCHEMA_TYPES } from './custom-event.entity.js';
export { AUTOMATION_STATUSES, RUN_STATUSES, RUN_STEP_STATUSES } from './automation.entity.js';
export type { ICapturedMessage } from './captured-message.entity.js';
export type {
  DeliverabilityMetric,
  IDeliverabilityDay,
  IDeliverabilityEpisode,
  IRegionBroadcastPause,
} from './deliverability.entity.js';
export { DELIVERABILITY_METRICS } from './deliverability.entity.js';
export { contactText } from './contact.entity.js';
export type { IDomain, DomainRecord, DomainStatus, RecordStatus } from './domain.entity.js';
export type { IDomainClaim, DomainClaimBlockedReason, DomainClaimStatus } from './domain-claim.entity.js';
export { DOMAIN_CLAIM_BLOCKED_REASONS, DOMAIN_CLAIM_STATUSES } from './domain-claim.entity.js';
export type { IEmail, EmailFacts, EmailStatus, EmailLastEvent } from './email.entity.js';
export type { IEmailAttachment } from './email-attachment.entity.js';
export type { IEmailRecipient } from './email-recipient.entity.js';
export type { IEmailTracking, ITrackingClick } from './email-tracking.entity.js';
export type { IEvent } from './event.entity.js';
export type { IIngestedNotification } from './ingested-notification.entity.js';
export type { IMtaStsPolicy, MtaStsMode } from './mta-sts-policy.entity.js';
export { MTA_STS_MODES } from './mta-sts-policy.entity.js';
export type { AuthVerdict, AuthVerdicts, IReceivedAttachment, IReceivedEmail } from './received-email.entity.js';
export type { ISuppression, SuppressionOrigin } from './suppression.entity.js';
export type { ITeam } from './team.entity.js';
export type { IContact, ContactPropertyValue } from './contact.entity.js';
export type { IContactProperty, ContactPropertyType } from './contact-property.entity.js';
export type { IContactTopic } from './contact-topic.entity.js';
export type { IErasureRequest } from './erasure-request.entity.js';
export type { ISegment, SegmentCondition, SegmentFilter } from './segment.entity.js';
export type { ISegmentMember } from './segment-member.entity.js';
export type { IShapingState } from './shaping-state.entity.js';
export type { ITopic, TopicSubscription, TopicVisibility } from './topic.entity.js';

export type { IBroadcast, BroadcastStatus } from './broadcast.entity.js';
export type { ITemplate, TemplateVariable, TemplateVariableType, TemplateVersion } from './template.entity.js';
export type { ITeamDailyUsage } from './usage.entity.js';
export type { IWebhookAttempt } from './webhook-attempt.entity.js';
export type { IWebhookDelivery, WebhookDeliveryStatus } from './webhook-delivery.entity.js';
export type { IWebhookEndpoint, WebhookEndpointStatus } from './webhook-endpoint.entity.js';

export const entities = [
  Team,
  Domain,
  DomainClaim,
  ApiKey,
  Email,
  EmailRecipient,
  EmailAttachment,
  Event,
  CapturedMessage,
  IdempotencyKey,
  Suppression,
  ApiLog,
  TeamDailyUsage,
  QuotaNotice,
  RateLimitWindow,
  Contact,
  ContactProperty,
  Segment,
  SegmentMember,
  Topic,
  ContactTopic,
  ErasureRequest,
  Template,
  Broadcast,
  WebhookEndpoint,
  WebhookDelivery,
  WebhookAttempt,
  DeliverabilityDay,
  DeliverabilityEpisode,
  RegionBroadcastPause,
  EmailTracking,
  TrackingClick,
  IngestedNotification,
  ReceivedEmail,
  ReceivedAttachment,
  ContactImport,
  ContactImportChunk,
  ContactImportError,
  Automation,
  AutomationVersion,
  AutomationRun,
  AutomationRunStep,
  CustomEvent,
  CustomEventRecord,
  MtaStsPolicy,
  ShapingState,
];
