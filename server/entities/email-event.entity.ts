import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Email } from './email.entity.js';
import { Team } from './team.entity.js';

export const EmailEvent = defineEntity({
  name: 'EmailEvent',
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    email: () => p.manyToOne(Email).deleteRule('cascade').index(),
    /** Webhook event names (`email.sent`), plus `email.failed`, which is recorded but never delivered. */
    type: p.text(),
    payload: p.json<Record<string, unknown>>(),
  },
});

export interface IEmailEvent extends InferEntity<typeof EmailEvent> {}
