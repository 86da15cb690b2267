import type * as v from 'valibot';
import { CREATED_AT, ID, RECIPIENT } from '../../examples.js';
import type { CreateEventBodySchema, EventListSchema, EventSchema, SendEventBodySchema } from './events.schemas.js';

export const EVENT_ID = '5e0d2c4b-8a1f-4b3e-9c7d-6f2a1b0e9d38';
const FIELDS = { name: 'cart.abandoned', schema: { cart_total: 'number', currency: 'string' } } as const;

export const CREATE_EVENT_REQUEST: v.InferInput<typeof CreateEventBodySchema> = FIELDS;
export const EVENT_LIST_ITEM: v.InferInput<typeof EventListSchema>['data'][number] = {
  id: EVENT_ID,
  ...FIELDS,
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
};
export const EVENT: v.InferInput<typeof EventSchema> = { object: 'event', ...EVENT_LIST_ITEM };
export const EVENT_REF = { object: 'event', id: EVENT_ID } as const;
export const SEND_EVENT_REQUEST: v.InferInput<typeof SendEventBodySchema> = {
  event: 'cart.abandoned',
  email: RECIPIENT.email,
  payload: { cart_total: 42.5, currency: 'EUR' },
};
export const SEND_EVENT_BY_CONTACT = { event: 'cart.abandoned', contact_id: ID.contact } as const;
