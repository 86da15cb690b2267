import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

export type ContactPropertyValue = string | number;

/**
 * The address and names joined, of the contact `alias` names (none: the table's own columns): what
 * `contact_text_trgm_idx` indexes and what segment counts match against it, one text for both so
 * the planner always sees the index's expression.
 */
export const contactText = (alias?: string) => {
  const column = (name: string) => (alias ? `${alias}."${name}"` : `"${name}"`);
  return `(${column('email')} || ' ' || coalesce(${column('first_name')}, '') || ' ' || coalesce(${column('last_name')}, ''))`;
};

/**
 * A person a team writes to. The address is stored lower-cased, so "matched case-insensitively"
 * is a plain equality on an indexed column. Custom property values live in `properties` keyed by
 * the property's key; the definitions (type, fallback) are in `contact_property`.
 */
export const Contact = defineEntity({
  name: 'Contact',
  uniques: [{ name: 'contact_team_id_email_unique', properties: ['team', 'email'] }],
  indexes: [
    { name: 'contact_team_listing_idx', properties: ['team', 'createdAt', 'id'] },
    // What a segment's count reads (Migration20270104000010_segment_counts, Migration20270105000010_segment_count_writes):
    // prefixes of the address and names, and trigrams of the three joined.
    ...(['email', 'first_name', 'last_name'] as const).map((column) => ({
      name: `contact_${column}_prefix_idx`,
      expression: `create index "contact_${column}_prefix_idx" on "contact" ("team_id", lower("${column}") text_pattern_ops)`,
    })),
    {
      name: 'contact_text_trgm_idx',
      expression: `create index "contact_text_trgm_idx" on "contact" using gin (${contactText()} gin_trgm_ops)`,
    },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    email: p.text(),
    firstName: p.text().nullable(),
    lastName: p.text().nullable(),
    unsubscribed: p.boolean().default(false),
    properties: p.json<Record<string, ContactPropertyValue>>().defaultRaw(`'{}'`),
    /** Moves only when a field actually changes: a write restating stored values leaves it alone. */
    updatedAt: timestamp().onCreate(() => new Date()),
  },
});

export interface IContact extends InferEntity<typeof Contact> {}
