import type * as v from 'valibot';
import { CREATED_AT, ID } from '../../examples.js';
import type { ContactPropertyListSchema, ContactPropertySchema } from './contact-properties.schemas.js';

export const CONTACT_PROPERTY_LIST_ITEM: v.InferInput<typeof ContactPropertyListSchema>['data'][number] = {
  id: ID.contactProperty,
  key: 'plan',
  type: 'string',
  fallback_value: 'free',
  created_at: CREATED_AT,
};

export const CONTACT_PROPERTY: v.InferInput<typeof ContactPropertySchema> = {
  object: 'contact_property',
  ...CONTACT_PROPERTY_LIST_ITEM,
};

export const CONTACT_PROPERTY_REF = { object: 'contact_property', id: ID.contactProperty } as const;
