import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import { Event, type IEvent } from '../../entities/index.js';
import {
  type DeliveryEndpoint,
  deliveryEndpointsQuery,
  type InsertedEvent,
  queueDeliveries,
  queueDeliveriesMany,
} from '../webhooks/queue-deliveries.js';

export interface EventInput {
  teamId: string;
  /** The webhook event name, such as `email.sent` or `contact.created`. */
  type: string;
  /** The event's `data`, exactly as webhooks deliver it. */
  data: Record<string, unknown>;
  /** Set for email events. */
  emailId?: string;
  createdAt?: Date;
}

/**
 * The one way anything records an event. Call it with the EntityManager of the transaction that
 * makes the change, so the event and its webhook deliveries commit or roll back with it (the
 * outbox rule): an event is never announced for a change that did not happen, and never lost for
 * one that did. Workers are woken after the commit.
 */
export async function emitEvent(em: EntityManager, input: EventInput): Promise<IEvent> {
  const event = em.create(Event, {
    team: input.teamId,
    email: input.emailId ?? null,
    type: input.type,
    payload: input.data,
    createdAt: input.createdAt ?? new Date(),
  });
  await queueDeliveries(em, event);
  return event;
}

/**
 * A write of the caller's that shares the events' statement, so both cost one round trip:
 * data-modifying CTEs (`name AS (INSERT …), …`) with their `?` bindings. The event INSERT and the
 * webhook endpoint lookup are appended to them.
 */
export interface AlongsideWrite {
  ctes: string;
  bindings: readonly unknown[];
}

const NO_ENDPOINTS = 'SELECT NULL::uuid AS id, NULL::uuid AS team_id, NULL::text[] AS events WHERE false';

/**
 * emitEvent for many events at once (a bulk contact import emits one per contact): one statement
 * per few thousand rows instead of one entity each, which also finds the webhook endpoints that
 * receive them (none: nothing more to write), and their deliveries likewise, in the caller's
 * transaction like emitEvent. `alongside` runs in the first of those statements.
 */
export async function emitEvents(
  em: EntityManager,
  inputs: readonly EventInput[],
  alongside?: AlongsideWrite,
): Promise<void> {
  if (inputs.length === 0) {
    if (alongside) await sqlQuery(em, `WITH ${alongside.ctes} SELECT 1`, alongside.bindings);
    return;
  }
  const CHUNK = 5_000;
  for (let start = 0; start < inputs.length; start += CHUNK) {
    const events: InsertedEvent[] = [];
    const rows: Record<string, unknown>[] = [];
    for (const input of inputs.slice(start, start + CHUNK)) {
      const event = {
        id: newId(),
        teamId: input.teamId,
        type: input.type,
        data: input.data,
        createdAt: input.createdAt ?? new Date(),
      };
      events.push(event);
      rows.push({
        id: event.id,
        team_id: event.teamId,
        email_id: input.emailId ?? null,
        type: event.type,
        payload: event.data,
        created_at: event.createdAt.toISOString(),
      });
    }
    const write = start === 0 ? alongside : undefined;
    const lookup = deliveryEndpointsQuery(events);
    const endpoints = await sqlQuery<DeliveryEndpoint>(
      em,
      `WITH ${write ? `${write.ctes}, ` : ''}inserted AS (
         INSERT INTO event (id, team_id, email_id, type, payload, created_at)
         SELECT id, team_id, email_id, type, payload, created_at FROM jsonb_to_recordset(?::jsonb)
           AS r(id uuid, team_id uuid, email_id uuid, type text, payload jsonb, created_at timestamptz)
       )
       ${lookup?.sql ?? NO_ENDPOINTS}`,
      [...(write?.bindings ?? []), JSON.stringify(rows), ...(lookup?.bindings ?? [])],
    );
    await queueDeliveriesMany(em, events, endpoints);
  }
}
