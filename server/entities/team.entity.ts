import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';

export const Team = defineEntity({
  name: 'Team',
  properties: {
    ...baseProperties,
    name: p.text(),
    /** Most contacts the team may hold; null means no cap (the self-hosted default). */
    contactLimit: p.integer().nullable(),
  },
});

export interface ITeam extends InferEntity<typeof Team> {}
