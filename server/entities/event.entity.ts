import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Email } from './email.entity.js';
import { Team } from './team.entity.js';

/**
 * Everything that happened to a team's data, in the shape webhooks deliver it: `type` is the
 * webhook event name and `payload` its `data`. Written only through `emitEvent`, in the
 * transaction of the change it reports.
 */
export const Event = defineEntity({
  name: 'Event',
  // A team's events by time: listings and the daily usage report.
  indexes: [{ name: 'event_team_created_idx', properties: ['team', 'createdAt'] }],
  properties: {
    ...baseProperties,
    /** No foreign key: checked per row, it was a third of a bulk event write; the change the event reports is of this team's row. */
    team: () => p.manyToOne(Team).createForeignKeyConstraint(false),
    /** Set for email events, so an email's history reads from here; `deleteEmail` removes them (no foreign key: partitions are dropped whole). */
    email: () => p.manyToOne(Email).createForeignKeyConstraint(false).nullable().index(),
    /** Webhook event names (`email.sent`), plus `email.failed`, which is recorded but never delivered. */
    type: p.text(),
    payload: p.json<Record<string, unknown>>(),
  },
});

export interface IEvent extends InferEntity<typeof Event> {}
