/** Every event Postlane delivers (spec, Events). */
export const DELIVERED_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.prefetched',
  'email.received',
  'deliverability.warning',
  'deliverability.paused',
  'quota.warning',
  'quota.reached',
  'quota.paused',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.unsubscribed',
  'contact.resubscribed',
  'contact.topic_opt_in',
  'contact.topic_opt_out',
  'suppression.added',
  'suppression.removed',
] as const;

/**
 * Resend's event names that Postlane never delivers: an endpoint may name them (code written for
 * Resend keeps working), they just never arrive. `email.failed` is recorded as an event but not sent.
 */
export const ACCEPTED_UNDELIVERED_EVENT_TYPES = [
  'email.scheduled',
  'email.failed',
  'email.suppressed',
  'contact.topics.updated',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'topic.created',
  'topic.updated',
  'topic.deleted',
  'inbox.created',
  'inbox.updated',
  'inbox.deleted',
  'inbox.thread.created',
  'inbox.thread.folder.updated',
  'inbox.thread.assigned',
  'inbox.thread.unassigned',
  'inbox.thread.labels.updated',
  'inbox.email.received',
  'inbox.email.sent',
  'inbox.draft.created',
  'inbox.draft.updated',
  'inbox.draft.sent',
  'inbox.draft.deleted',
] as const;

/** In an endpoint's `events`: every delivered event except the opt-in `email.prefetched`. */
export const ALL_EVENTS = '*';

/** `email.prefetched` reaches only endpoints that name it. */
export const OPT_IN_EVENT_TYPES: readonly string[] = ['email.prefetched'];

export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = [
  ALL_EVENTS,
  ...DELIVERED_EVENT_TYPES,
  ...ACCEPTED_UNDELIVERED_EVENT_TYPES,
];

const delivered = new Set<string>(DELIVERED_EVENT_TYPES);

export const isDeliveredEventType = (type: string) => delivered.has(type);
