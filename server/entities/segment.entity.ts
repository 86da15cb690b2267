import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Team } from './team.entity.js';

export interface SegmentCondition {
  field: string;
  op: string;
  value?: string | number | boolean;
}

export interface SegmentFilter {
  match: 'all' | 'any';
  conditions: SegmentCondition[];
}

/**
 * A named group of contacts: those added to it one by one (`segment_member`) and, when the filter
 * has conditions, every contact the filter matches at the time it is read.
 */
export const Segment = defineEntity({
  name: 'Segment',
  indexes: [{ name: 'segment_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    name: p.text(),
    filter: p.json<SegmentFilter>().defaultRaw(`'{"match":"all","conditions":[]}'`),
  },
});

export interface ISegment extends InferEntity<typeof Segment> {}
