import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Team } from './team.entity.js';

export const SUPPRESSION_ORIGINS = ['bounce', 'complaint', 'manual', 'unsubscribe'] as const;
export type SuppressionOrigin = (typeof SUPPRESSION_ORIGINS)[number];

/**
 * An address the team must not send to. Looked up by a keyed hash of the address, so an erased
 * address (whose `email` is cleared) is still recognised as suppressed without being kept.
 */
export const Suppression = defineEntity({
  name: 'Suppression',
  uniques: [{ name: 'suppression_team_address_unique', properties: ['team', 'addressHash'] }],
  indexes: [{ name: 'suppression_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    /** Lower-cased; null once erased. */
    email: p.text().nullable(),
    addressHash: p.blob(),
    origin: p.enum([...SUPPRESSION_ORIGINS]),
    /** Who added it (`api`, `dashboard`, `hosted_page`, `one_click`); null when the provider reported it. */
    source: p.text().nullable(),
    /** What caused it, such as the email that bounced. */
    sourceId: p.uuid().nullable(),
  },
});

export interface ISuppression extends InferEntity<typeof Suppression> {}
