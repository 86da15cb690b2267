import * as v from 'valibot';
import { BOOLEAN_OPS, FIELD, NUMBER_OPS, TEXT_OPS, TIME_OPS } from '../../../services/segments/segment-filter.js';
import { LineSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const OPS = [...new Set([...TEXT_OPS, ...NUMBER_OPS, ...BOOLEAN_OPS, ...TIME_OPS])];

const ConditionSchema = v.strictObject({
  field: v.pipe(
    v.string(),
    v.regex(
      FIELD,
      'must be email, first_name, last_name, unsubscribed, created_at, properties.<key> or topics.<topic id>',
    ),
    v.metadata({ examples: ['email', 'properties.plan', 'topics.4a1b…'] }),
  ),
  op: v.picklist(OPS, `must be one of ${OPS.join(', ')}`),
  value: v.optional(
    v.union(
      [v.pipe(v.string(), v.maxLength(1000, 'must be at most 1000 characters')), v.number(), v.boolean()],
      'must be a string, a number or a boolean',
    ),
  ),
});

export const SegmentFilterSchema = v.pipe(
  v.strictObject({
    match: v.optional(v.picklist(['all', 'any'], 'must be all or any'), 'all'),
    conditions: v.pipe(v.array(ConditionSchema), v.maxLength(20, 'must hold at most 20 conditions')),
  }),
  v.metadata({
    title: 'SegmentFilter',
    description:
      'Contacts matching all (or any) conditions belong to the segment, besides those added by hand. Text operators: eq, neq, contains, not_contains, starts_with, ends_with, exists, not_exists (case-insensitive); numbers: eq, neq, gt, gte, lt, lte, exists, not_exists; unsubscribed: eq, neq; created_at: gt, gte, lt, lte; topics.<id>: eq, neq with opt_in or opt_out.',
  }),
);

const SegmentNameSchema = v.pipe(
  LineSchema,
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
);

export const CreateSegmentBodySchema = v.strictObject({
  name: SegmentNameSchema,
  filter: v.optional(SegmentFilterSchema),
});
export const UpdateSegmentBodySchema = v.pipe(
  v.strictObject({ name: v.optional(SegmentNameSchema), filter: v.optional(SegmentFilterSchema) }),
  v.check((body) => body.name !== undefined || body.filter !== undefined, 'name or filter is required'),
);

const FilterOutputSchema = v.object({
  match: v.picklist(['all', 'any']),
  conditions: v.array(
    v.object({ field: v.string(), op: v.string(), value: v.optional(v.union([v.string(), v.number(), v.boolean()])) }),
  ),
});

export const segmentSchemas = (object: 'segment' | 'audience') => {
  const entries = { id: UuidSchema, name: v.string(), filter: FilterOutputSchema, created_at: TimestampSchema };
  return {
    created: v.object({ object: v.literal(object), ...entries }),
    item: v.object(entries),
    full: v.object({ object: v.literal(object), ...entries, contact_count: v.number() }),
    ref: v.object({ object: v.literal(object), id: UuidSchema }),
    deleted: v.object({ object: v.literal(object), id: UuidSchema, deleted: v.literal(true) }),
  };
};
