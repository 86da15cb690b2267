import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

export const TEMPLATE_VARIABLE_TYPES = ['string', 'number'] as const;
export type TemplateVariableType = (typeof TEMPLATE_VARIABLE_TYPES)[number];

/** A placeholder the template declares: its type checks the values sent, its fallback fills it when none is. */
export interface TemplateVariable {
  key: string;
  type: TemplateVariableType;
  fallbackValue: string | number | null;
}

/** What a send renders: the draft's fields as they stood when the template was published. */
export interface TemplateVersion {
  subject: string | null;
  html: string;
  text: string | null;
  variables: TemplateVariable[];
}

/**
 * A stored message layout. The columns hold the draft, which edits change; `published` is the
 * frozen copy sends use, so editing a live template never changes mail until it is published again.
 */
export const Template = defineEntity({
  name: 'Template',
  uniques: [{ name: 'template_team_alias_unique', properties: ['team', 'alias'] }],
  indexes: [{ name: 'template_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    name: p.text(),
    /** Another handle for the API and for sends; never shaped like a UUID, so id-or-alias lookups are unambiguous. */
    alias: p.text().nullable(),
    subject: p.text().nullable(),
    html: p.text(),
    text: p.text().nullable(),
    variables: p.json<TemplateVariable[]>().defaultRaw(`'[]'`),
    /** Changes on every edit of the draft. */
    currentVersionId: p.uuid(),
    published: p.json<TemplateVersion>().nullable(),
    publishedAt: timestamp().nullable(),
    updatedAt: timestamp(),
  },
});

export interface ITemplate extends InferEntity<typeof Template> {}
