import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';
import { Contact } from './contact.entity.js';
import { Segment } from './segment.entity.js';

/** A contact added to a segment by hand (static membership); goes with either side. */
export const SegmentMember = defineEntity({
  name: 'SegmentMember',
  properties: {
    segment: () => p.manyToOne(Segment).primary().deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).primary().deleteRule('cascade').index(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});

export interface ISegmentMember extends InferEntity<typeof SegmentMember> {}
