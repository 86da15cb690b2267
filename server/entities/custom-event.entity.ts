import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

export const EVENT_SCHEMA_TYPES = ['string', 'number', 'boolean', 'date'] as const;
export type EventSchemaType = (typeof EVENT_SCHEMA_TYPES)[number];
export type EventSchemaMap = Record<string, EventSchemaType>;

/** A custom event's definition (Resend's "event"): a name and, optionally, the types of its payload's keys. */
export const CustomEvent = defineEntity({
  name: 'CustomEvent',
  uniques: [{ name: 'custom_event_team_name_unique', properties: ['team', 'name'] }],
  indexes: [{ name: 'custom_event_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    updatedAt: timestamp().onCreate(() => new Date()),
    team: () => p.manyToOne(Team),
    name: p.text(),
    schema: p.json<EventSchemaMap>().nullable(),
  },
});
export interface ICustomEvent extends InferEntity<typeof CustomEvent> {}

/** One event sent through POST /events/send, kept for the retention period (erasure scrubs its payload). */
export const CustomEventRecord = defineEntity({
  name: 'CustomEventRecord',
  properties: {
    ...baseProperties,
    teamId: p.uuid(),
    name: p.text(),
    contactId: p.uuid().nullable(),
    payload: p.json<Record<string, unknown>>(),
  },
});
export interface ICustomEventRecord extends InferEntity<typeof CustomEventRecord> {}
