import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

/**
 * An address a team asked to have scrubbed from its history (a delete with `erase`). Recorded in
 * the transaction of the delete; the scrubbing itself works through the rows still pending.
 */
export const ErasureRequest = defineEntity({
  name: 'ErasureRequest',
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    email: p.text(),
    completedAt: timestamp().nullable(),
  },
});

export interface IErasureRequest extends InferEntity<typeof ErasureRequest> {}
