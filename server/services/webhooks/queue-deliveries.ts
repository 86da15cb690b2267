import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { type IEvent, WebhookDelivery, WebhookEndpoint } from '../../entities/index.js';
import { createMessageId } from '../../webhooks/signing.js';
import { ALL_EVENTS, isDeliveredEventType, OPT_IN_EVENT_TYPES } from './event-types.js';
import { wakeAfterCommit } from './webhook-waker.js';

/** The endpoint subscriptions that receive `type`: opt-in types only when named, others also through `*`. */
const subscriptionsFor = (type: string): string[] => (OPT_IN_EVENT_TYPES.includes(type) ? [type] : [type, ALL_EVENTS]);

/** The envelope of an event, serialised once: those exact bytes are signed and sent on every attempt. */
const envelope = (type: string, createdAt: Date, data: unknown) => JSON.stringify({ type, created_at: createdAt.toISOString(), data });

/**
 * The outbox write of an event: one pending delivery per enabled endpoint of the team that
 * subscribes to its type, in the caller's transaction.
 */
export async function queueDeliveries(em: EntityManager, event: IEvent): Promise<void> {
  if (!isDeliveredEventType(event.type)) return;
  const endpoints = await em.find(WebhookEndpoint, { team: event.team, status: 'enabled', events: { $overlap: subscriptionsFor(event.type) } }, { fields: ['id'] });
  if (endpoints.length === 0) return;
  const body = envelope(event.type, event.createdAt, event.payload);
  // Due from the moment of the event, on the clock of whoever recorded it (the injectable one in services).
  const queuedAt = event.createdAt;
  for (const endpoint of endpoints) {
    em.create(WebhookDelivery, { team: event.team, endpoint: endpoint.id, event, type: event.type, messageId: createMessageId(), body, status: 'pending', dueAt: queuedAt, queuedAt });
  }
  wakeAfterCommit(em, endpoints.map((endpoint) => endpoint.id));
}

/** An event already inserted by a bulk write, as queueDeliveriesMany needs it. */
export interface InsertedEvent {
  id: string;
  teamId: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * queueDeliveries for events written in bulk (a contact import, a topic default change): one
 * endpoint lookup for all of them and one INSERT per few thousand deliveries, in the caller's
 * transaction.
 */
export async function queueDeliveriesMany(em: EntityManager, events: readonly InsertedEvent[]): Promise<void> {
  const delivered = events.filter((event) => isDeliveredEventType(event.type));
  if (delivered.length === 0) return;
  const teamIds = [...new Set(delivered.map((event) => event.teamId))];
  const types = [...new Set(delivered.flatMap((event) => subscriptionsFor(event.type)))];
  const endpoints = await em.find(WebhookEndpoint, { team: { $in: teamIds }, status: 'enabled', events: { $overlap: types } }, { fields: ['id', 'team', 'events'] });
  if (endpoints.length === 0) return;

  const rows: Record<string, unknown>[] = [];
  const woken = new Set<string>();
  for (const event of delivered) {
    const subscriptions = subscriptionsFor(event.type);
    const receivers = endpoints.filter((endpoint) => endpoint.team.id === event.teamId && endpoint.events.some((name) => subscriptions.includes(name)));
    if (receivers.length === 0) continue;
    const body = envelope(event.type, event.createdAt, event.data);
    const at = event.createdAt.toISOString();
    for (const endpoint of receivers) {
      rows.push({ id: randomUUID(), team_id: event.teamId, endpoint_id: endpoint.id, event_id: event.id, type: event.type, message_id: createMessageId(), body, at });
      woken.add(endpoint.id);
    }
  }
  const CHUNK = 5_000;
  for (let start = 0; start < rows.length; start += CHUNK) {
    await sqlQuery(
      em,
      `INSERT INTO webhook_delivery (id, created_at, updated_at, team_id, endpoint_id, event_id, type, message_id, body, status, due_at, queued_at)
       SELECT id, now(), now(), team_id, endpoint_id, event_id, type, message_id, body, 'pending', at, at FROM jsonb_to_recordset(?::jsonb)
         AS r(id uuid, team_id uuid, endpoint_id uuid, event_id uuid, type text, message_id text, body text, at timestamptz)`,
      [JSON.stringify(rows.slice(start, start + CHUNK))],
    );
  }
  wakeAfterCommit(em, [...woken]);
}
