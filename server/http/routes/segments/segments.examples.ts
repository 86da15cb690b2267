import type * as v from 'valibot';
import { CREATED_AT, ID } from '../../examples.js';
import type { CreateSegmentBodySchema, SegmentFilterSchema, segmentSchemas } from './segments.schemas.js';

const FILTER: v.InferOutput<typeof SegmentFilterSchema> = {
  match: 'all',
  conditions: [
    { field: 'properties.plan', op: 'eq', value: 'pro' },
    { field: 'unsubscribed', op: 'eq', value: false },
  ],
};

export const CREATE_SEGMENT_REQUEST: v.InferInput<typeof CreateSegmentBodySchema> = {
  name: 'Pro customers',
  filter: FILTER,
};

/** As listed; the same resource answers as `segment` or `audience`, following the path. */
export const SEGMENT_LIST_ITEM: v.InferInput<ReturnType<typeof segmentSchemas>['item']> = {
  id: ID.segment,
  name: 'Pro customers',
  filter: FILTER,
  created_at: CREATED_AT,
};
