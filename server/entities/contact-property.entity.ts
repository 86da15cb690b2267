import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import type { ContactPropertyValue } from './contact.entity.js';
import { Team } from './team.entity.js';

export const CONTACT_PROPERTY_TYPES = ['string', 'number'] as const;
export type ContactPropertyType = (typeof CONTACT_PROPERTY_TYPES)[number];

/** A custom field a team declares once; contacts then carry values of its type under its key. */
export const ContactProperty = defineEntity({
  name: 'ContactProperty',
  uniques: [{ name: 'contact_property_team_id_key_unique', properties: ['team', 'key'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    key: p.text(),
    type: p.enum([...CONTACT_PROPERTY_TYPES]),
    /** What a contact without a value of its own reads as (same type as the property). */
    fallbackValue: p.json<ContactPropertyValue>().nullable(),
  },
});

export interface IContactProperty extends InferEntity<typeof ContactProperty> {}
