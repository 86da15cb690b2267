import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Team } from './team.entity.js';

export const TOPIC_SUBSCRIPTIONS = ['opt_in', 'opt_out'] as const;
export type TopicSubscription = (typeof TOPIC_SUBSCRIPTIONS)[number];
export const TOPIC_VISIBILITIES = ['public', 'private'] as const;
export type TopicVisibility = (typeof TOPIC_VISIBILITIES)[number];

/** A kind of mail a contact can opt in to or out of; the default applies to contacts who never chose. */
export const Topic = defineEntity({
  name: 'Topic',
  indexes: [{ name: 'topic_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    name: p.text(),
    description: p.text().nullable(),
    defaultSubscription: p.enum([...TOPIC_SUBSCRIPTIONS]),
    visibility: p.enum([...TOPIC_VISIBILITIES]).default('private'),
  },
});

export interface ITopic extends InferEntity<typeof Topic> {}
