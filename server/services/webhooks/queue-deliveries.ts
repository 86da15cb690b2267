import type { EntityManager } from '@mikro-orm/postgresql';
import { type IEvent, WebhookDelivery, WebhookEndpoint } from '../../entities/index.js';
import { createMessageId } from '../../webhooks/signing.js';
import { ALL_EVENTS, isDeliveredEventType, OPT_IN_EVENT_TYPES } from './event-types.js';
import { wakeAfterCommit } from './webhook-waker.js';

/**
 * The outbox write of an event: one pending delivery per enabled endpoint of the team that
 * subscribes to its type, in the caller's transaction. The envelope is serialised here, once;
 * those exact bytes are signed and sent on every attempt.
 */
export async function queueDeliveries(em: EntityManager, event: IEvent): Promise<void> {
  if (!isDeliveredEventType(event.type)) return;
  const subscribed = OPT_IN_EVENT_TYPES.includes(event.type) ? [event.type] : [event.type, ALL_EVENTS];
  const endpoints = await em.find(WebhookEndpoint, { team: event.team, status: 'enabled', events: { $overlap: subscribed } }, { fields: ['id'] });
  if (endpoints.length === 0) return;
  const body = JSON.stringify({ type: event.type, created_at: event.createdAt.toISOString(), data: event.payload });
  // Due from the moment of the event, on the clock of whoever recorded it (the injectable one in services).
  const queuedAt = event.createdAt;
  for (const endpoint of endpoints) {
    em.create(WebhookDelivery, {
      team: event.team,
      endpoint: endpoint.id,
      event,
      type: event.type,
      messageId: createMessageId(),
      body,
      status: 'pending',
      dueAt: queuedAt,
      queuedAt,
    });
  }
  wakeAfterCommit(em, endpoints.map((endpoint) => endpoint.id));
}
