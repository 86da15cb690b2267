import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';

export const Team = defineEntity({
  name: 'Team',
  properties: {
    ...baseProperties,
    name: p.text(),
    /** Set while the team's bounce or complaint rate is past the enforcement line: new sends are refused. */
    sendingPausedAt: timestamp().nullable(),
  },
});

export interface ITeam extends InferEntity<typeof Team> {}
