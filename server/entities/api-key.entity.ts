import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

export const API_KEY_PERMISSIONS = ['full_access', 'sending_access'] as const;
export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];

export const ApiKey = defineEntity({
  name: 'ApiKey',
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team).index(),
    name: p.text(),
    permission: p.enum([...API_KEY_PERMISSIONS]),
    /** Sending keys may be limited to one domain. No foreign key: removing the domain must not widen the key, which then cannot send. */
    domainId: p.uuid().nullable(),
    /** SHA-256 of the token: a 256-bit random secret needs neither salt nor slow hashing. */
    tokenHash: p.blob().unique(),
    /** First and last characters, so an operator can tell keys apart without the secret. */
    tokenHint: p.text(),
    lastUsedAt: timestamp().nullable(),
    revokedAt: timestamp().nullable(),
  },
});

export interface IApiKey extends InferEntity<typeof ApiKey> {}
