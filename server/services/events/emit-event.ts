import type { EntityManager } from '@mikro-orm/postgresql';
import { Event, type IEvent } from '../../entities/index.js';
import { queueDeliveries } from '../webhooks/queue-deliveries.js';

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
