import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';

export const Team = defineEntity({
  name: 'Team',
  properties: {
    ...baseProperties,
    name: p.text(),
  },
});

export interface ITeam extends InferEntity<typeof Team> {}
