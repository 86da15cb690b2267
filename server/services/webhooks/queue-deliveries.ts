import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import { type IEvent, WebhookDelivery, WebhookEndpoint } from '../../entities/index.js';
import { createMessageId } from '../../webhooks/signing.js';
import { ALL_EVENTS, isDeliveredEventType, OPT_IN_EVENT_TYPES } from './event-types.js';
import { wakeAfterCommit } from './webhook-waker.js';

/** The endpoint subscriptions that receive `type`: opt-in types only when named, others also through `*`. */
const subscriptionsFor = (type: string): string[] => (OPT_IN_EVENT_TYPES.includes(type) ? [type] : [type, ALL_EVENTS]);

/** The endpoint subscriptions that get deliveries of `type`; none when it is never delivered. */
export const deliveredTo = (type: string): string[] => (isDeliveredEventType(type) ? subscriptionsFor(type) : []);

/** The envelope of an event, serialised once: those exact bytes are signed and sent on every attempt. */
const envelope = (type: string, createdAt: Date, data: unknown) =>
  JSON.stringify({ type, created_at: createdAt.toISOString(), data });

/**
 * The outbox write of an event: one pending delivery per enabled endpoint of the team that
 * subscribes to its type, in the caller's transaction.
 */
export async function queueDeliveries(em: EntityManager, event: IEvent): Promise<void> {
  if (!isDeliveredEventType(event.type)) return;
  const endpoints = await em.find(
    WebhookEndpoint,
    { team: event.team, status: 'enabled', events: { $overlap: subscriptionsFor(event.type) } },
    { fields: ['id'] },
  );
  if (endpoints.length === 0) return;
  const body = envelope(event.type, event.createdAt, event.payload);
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
  wakeAfterCommit(
    em,
    endpoints.map((endpoint) => endpoint.id),
  );
}

/** An event already inserted by a bulk write, as queueDeliveriesMany needs it. */
export interface InsertedEvent {
  id: string;
  teamId: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** An enabled endpoint that receives some of a bulk write's events. */
export interface DeliveryEndpoint {
  id: string;
  team_id: string;
  events: string[];
}

const deliveredOnly = (events: readonly InsertedEvent[]) => events.filter((event) => isDeliveredEventType(event.type));

/**
 * The lookup of the endpoints that may receive any of these events, as SQL for the bulk write's
 * own statement (no round trip of its own); null when none of them is ever delivered.
 */
export function deliveryEndpointsQuery(events: readonly InsertedEvent[]): { sql: string; bindings: unknown[] } | null {
  const teamIds = new Set<string>();
  const types = new Set<string>();
  // Types are looked at once each: a bulk write's thousands of events share one or two.
  const delivered = new Map<string, boolean>();
  for (const event of events) {
    let isDelivered = delivered.get(event.type);
    if (isDelivered === undefined) {
      delivered.set(event.type, (isDelivered = isDeliveredEventType(event.type)));
      if (isDelivered) for (const name of subscriptionsFor(event.type)) types.add(name);
    }
    if (isDelivered) teamIds.add(event.teamId);
  }
  if (teamIds.size === 0) return null;
  return {
    sql: `SELECT id, team_id, events FROM webhook_endpoint
          WHERE team_id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid) AND status = 'enabled' AND events && ARRAY(SELECT jsonb_array_elements_text(?::jsonb))`,
    bindings: [JSON.stringify([...teamIds]), JSON.stringify([...types])],
  };
}

async function findDeliveryEndpoints(em: EntityManager, events: readonly InsertedEvent[]): Promise<DeliveryEndpoint[]> {
  const lookup = deliveryEndpointsQuery(events);
  return lookup ? sqlQuery<DeliveryEndpoint>(em, lookup.sql, lookup.bindings) : [];
}

/**
 * queueDeliveries for events written in bulk (a contact import, a topic default change): one
 * endpoint lookup for all of them (`endpoints`, when the caller's statement already ran
 * deliveryEndpointsQuery) and one INSERT per few thousand deliveries, in the caller's transaction.
 */
export async function queueDeliveriesMany(
  em: EntityManager,
  events: readonly InsertedEvent[],
  endpoints?: readonly DeliveryEndpoint[],
): Promise<void> {
  const receiving = endpoints ?? (await findDeliveryEndpoints(em, events));
  if (receiving.length === 0) return;

  const rows: Record<string, unknown>[] = [];
  const woken = new Set<string>();
  for (const event of deliveredOnly(events)) {
    const subscriptions = subscriptionsFor(event.type);
    const receivers = receiving.filter(
      (endpoint) => endpoint.team_id === event.teamId && endpoint.events.some((name) => subscriptions.includes(name)),
    );
    if (receivers.length === 0) continue;
    const body = envelope(event.type, event.createdAt, event.data);
    const at = event.createdAt.toISOString();
    for (const endpoint of receivers) {
      rows.push({
        id: newId(),
        team_id: event.teamId,
        endpoint_id: endpoint.id,
        event_id: event.id,
        type: event.type,
        message_id: createMessageId(),
        body,
        at,
      });
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
