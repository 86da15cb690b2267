import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

/**
 * An address a team asked to have scrubbed from its history (a delete with `erase`). Recorded in
 * the transaction of the delete; the scrubbing itself works through the rows still pending.
 */
export const ErasureRequest = defineEntity({
  name: 'ErasureRequest',
  indexes: [{ name: 'erasure_request_pending_idx', properties: ['completedAt', 'team'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    /** `[erased]` once done: the request itself must not keep the address. */
    email: p.text(),
    completedAt: timestamp().nullable(),
    /** What the erasure removed or rewrote, per kind. */
    receipt: p.json<Record<string, number>>().nullable(),
  },
});

export interface IErasureRequest extends InferEntity<typeof ErasureRequest> {}
