import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';

export const Team = defineEntity({
  name: 'Team',
  properties: {
    ...baseProperties,
    name: p.text(),
    /** Who hears about trouble with the team's webhooks (and other owner notices). */
    ownerEmails: p.array().columnType('text[]').defaultRaw(`'{}'`),
  },
});

export interface ITeam extends InferEntity<typeof Team> {}
