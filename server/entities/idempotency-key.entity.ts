import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';
import { Team } from './team.entity.js';

/** One Idempotency-Key of a team: the request it was first used for, and the answer that was given. */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  checks: [{ name: 'idempotency_key_key_check', expression: '(char_length(key) >= 1) AND (char_length(key) <= 256)' }],
  properties: {
    team: () => p.manyToOne(Team).primary(),
    key: p.text().primary(),
    /** SHA-256 of the route and the canonical JSON of the body. */
    requestHash: p.blob(),
    state: p.enum(['running', 'done']),
    statusCode: p.integer().nullable(),
    response: p.json<unknown>().nullable(),
    createdAt: timestamp()
      .onCreate(() => new Date())
      .index(),
  },
});

export interface IIdempotencyKey extends InferEntity<typeof IdempotencyKey> {}
