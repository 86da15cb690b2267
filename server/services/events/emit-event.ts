import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { Event, type IEvent } from '../../entities/index.js';
import { type InsertedEvent, queueDeliveries, queueDeliveriesMany } from '../webhooks/queue-deliveries.js';

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
 * emitEvent for many events at once (a bulk contact import emits one per contact): one INSERT per
 * few thousand rows instead of one entity each, and their webhook deliveries likewise, in the
 * caller's transaction like emitEvent.
 */
export async function emitEvents(em: EntityManager, inputs: readonly EventInput[]): Promise<void> {
  const CHUNK = 5_000;
  for (let start = 0; start < inputs.length; start += CHUNK) {
    const events: InsertedEvent[] = inputs.slice(start, start + CHUNK).map((input) => ({
      id: randomUUID(),
      teamId: input.teamId,
      type: input.type,
      data: input.data,
      createdAt: input.createdAt ?? new Date(),
    }));
    const rows = events.map((event, i) => ({
      id: event.id,
      team_id: event.teamId,
      email_id: inputs[start + i]!.emailId ?? null,
      type: event.type,
      payload: event.data,
      created_at: event.createdAt.toISOString(),
    }));
    await sqlQuery(
      em,
      `INSERT INTO event (id, team_id, email_id, type, payload, created_at)
       SELECT id, team_id, email_id, type, payload, created_at FROM jsonb_to_recordset(?::jsonb)
         AS r(id uuid, team_id uuid, email_id uuid, type text, payload jsonb, created_at timestamptz)`,
      [JSON.stringify(rows)],
    );
    await queueDeliveriesMany(em, events);
  }
}
