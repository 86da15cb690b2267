import type * as v from 'valibot';
import { CREATED_AT, ID, OTHER_RECIPIENT, RECIPIENT } from '../../examples.js';
import { TOPIC } from '../topics/topics.examples.js';
import type {
  ContactListItemSchema,
  ContactSchema,
  ContactTopicRowSchema,
  CreateContactBodySchema,
} from './contacts.schemas.js';

export const CREATE_CONTACT_REQUEST: v.InferInput<typeof CreateContactBodySchema> = {
  email: RECIPIENT.email,
  first_name: RECIPIENT.firstName,
  last_name: RECIPIENT.lastName,
  unsubscribed: false,
  properties: { plan: 'pro', seats: 12 },
  segments: [{ id: ID.segment }],
  topics: [{ id: ID.topic, subscription: 'opt_in' }],
};

/** A batch of creates: the same shape, one per contact. */
export const CREATE_CONTACTS_REQUEST: v.InferInput<typeof CreateContactBodySchema>[] = [
  CREATE_CONTACT_REQUEST,
  {
    email: OTHER_RECIPIENT.email,
    first_name: OTHER_RECIPIENT.firstName,
    last_name: OTHER_RECIPIENT.lastName,
    properties: { plan: 'free' },
  },
];

export const CONTACT_REF = { object: 'contact', id: ID.contact } as const;

export const CONTACT_TOPIC: v.InferInput<typeof ContactTopicRowSchema> = {
  id: TOPIC.id,
  name: TOPIC.name,
  description: TOPIC.description,
  subscription: 'opt_in',
  explicit: true,
  visibility: 'public',
};

const CONTACT_FIELDS = {
  id: ID.contact,
  email: RECIPIENT.email,
  first_name: RECIPIENT.firstName,
  last_name: RECIPIENT.lastName,
  created_at: CREATED_AT,
  unsubscribed: false,
};

const PROPERTIES = { plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 12 } } as const;

export const CONTACT: v.InferInput<typeof ContactSchema> = {
  object: 'contact',
  ...CONTACT_FIELDS,
  properties: PROPERTIES,
};

/** As listed with `include=properties,topics`. */
export const CONTACT_LIST_ITEM: v.InferInput<typeof ContactListItemSchema> = {
  ...CONTACT_FIELDS,
  properties: PROPERTIES,
  topics: [CONTACT_TOPIC],
};

export const CONTACT_SEGMENT = {
  object: 'contact_segment',
  id: ID.segment,
  contact_id: ID.contact,
  segment_id: ID.segment,
} as const;
