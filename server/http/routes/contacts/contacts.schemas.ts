import * as v from 'valibot';
import { contactAddress } from '../../../mail/contact-address.js';
import {
  LineSchema,
  listOf,
  paginatedQuery,
  TextSchema,
  TimestampSchema,
  UuidSchema,
} from '../../schemas/common.schemas.js';

/** A bare address (no display name), kept lower-cased: contacts are matched case-insensitively. */
export const ContactEmailSchema = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const result = contactAddress(dataset.value);
    if ('address' in result) return result.address;
    addIssue({ message: result.problem });
    return NEVER;
  }),
  v.metadata({ description: 'A bare email address; matched case-insensitively.' }),
);

const NameSchema = v.pipe(LineSchema, v.maxLength(255, 'must be at most 255 characters'));

export const PropertyKeySchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,49}$/, 'must be 1 to 50 letters, digits or underscores, not starting with a digit'),
);
const PropertyValueSchema = v.union(
  [
    v.pipe(TextSchema, v.maxLength(2000, 'must be at most 2000 characters')),
    v.pipe(v.number(), v.finite('must be a finite number')),
    v.null(),
  ],
  'must be a string, a number or null',
);
const PropertiesSchema = v.pipe(
  v.record(PropertyKeySchema, PropertyValueSchema),
  v.check((values) => Object.keys(values).length <= 100, 'must hold at most 100 properties'),
  v.metadata({ description: 'Values of declared contact properties; null removes a value.' }),
);

const SubscriptionSchema = v.picklist(['opt_in', 'opt_out'], 'must be opt_in or opt_out');
const TopicChoiceSchema = v.strictObject({ id: UuidSchema, subscription: SubscriptionSchema });

/** Segments as `[{id}]` (the SDK) or `["uuid"]` (the OpenAPI file), always ids once parsed. */
const SegmentRefsSchema = v.pipe(
  v.array(
    v.union(
      [
        UuidSchema,
        v.pipe(
          v.strictObject({ id: UuidSchema }),
          v.transform((s) => s.id),
        ),
      ],
      'must be a segment id or {id}',
    ),
  ),
  v.maxLength(100, 'must hold at most 100 segments'),
);

export const CreateContactBodySchema = v.pipe(
  v.strictObject({
    email: ContactEmailSchema,
    first_name: v.nullish(NameSchema),
    last_name: v.nullish(NameSchema),
    unsubscribed: v.nullish(v.boolean()),
    properties: v.nullish(PropertiesSchema),
    segments: v.nullish(SegmentRefsSchema),
    topics: v.nullish(v.pipe(v.array(TopicChoiceSchema), v.maxLength(100, 'must hold at most 100 topics'))),
  }),
  v.metadata({ title: 'CreateContactRequest' }),
);
export type CreateContactBodyOutput = v.InferOutput<typeof CreateContactBodySchema>;

/** The item shape is checked one by one (strict or permissive), so the body is only an array here. */
export const BatchCreateBodySchema = v.pipe(
  v.array(v.unknown(), 'must be an array of contacts'),
  v.minLength(1, 'must hold at least 1 contact'),
  v.maxLength(1000, 'must hold at most 1000 contacts'),
  v.metadata({
    description:
      'CreateContactRequest items, 1 to 1000. With `x-batch-validation: strict` (the default) any failing item refuses the whole batch with ' +
      'its status and a `contacts.{index}: ` message naming the lowest failing index, and nothing is written: 422 for an invalid item, ' +
      '409 `conflict` under `on_conflict=error` for an address that already belongs to a contact or repeats an earlier item, ' +
      '403 `plan_limit_reached` for a new contact past the cap. With `permissive` those items are listed in `errors` and the rest is written.',
  }),
);

export const BatchCreateQuerySchema = v.object({
  on_conflict: v.pipe(
    v.optional(v.picklist(['error', 'skip', 'upsert'], 'must be error, skip or upsert'), 'error'),
    v.metadata({
      description:
        'An address that already belongs to a contact, or repeats an earlier item: `error` fails the item (409), `skip` keeps the first, `upsert` merges.',
    }),
  ),
});
export const BatchValidationHeaderSchema = v.optional(
  v.picklist(['strict', 'permissive'], 'must be strict or permissive'),
  'strict',
);

export const UpdateContactBodySchema = v.strictObject({
  email: v.optional(ContactEmailSchema),
  first_name: v.optional(v.nullable(NameSchema)),
  last_name: v.optional(v.nullable(NameSchema)),
  unsubscribed: v.optional(v.boolean()),
  properties: v.optional(PropertiesSchema),
});

export const ContactParamSchema = v.object({
  id: v.pipe(TextSchema, v.minLength(1, 'must not be empty'), v.maxLength(320, 'is too long')),
});
export const ContactSegmentParamSchema = v.object({ id: ContactParamSchema.entries.id, segmentId: UuidSchema });
export const AudienceContactParamSchema = v.object({ audienceId: UuidSchema, id: ContactParamSchema.entries.id });

export const DeleteContactQuerySchema = v.object({
  erase: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((value) => value === 'true'),
    ),
    'false',
  ),
});

const FacetSchema = v.picklist(['properties', 'topics'], 'must be properties or topics');
export const ListContactsQuerySchema = paginatedQuery({
  include: v.optional(
    v.pipe(
      v.string(),
      v.transform((value) =>
        value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
      v.array(FacetSchema),
    ),
  ),
  segment_id: v.optional(UuidSchema),
});

export const BatchGetBodySchema = v.strictObject({
  contacts: v.pipe(
    v.array(
      v.union(
        [
          v.strictObject({ id: UuidSchema }),
          v.strictObject({ email: v.pipe(v.string(), v.maxLength(320, 'is too long')) }),
        ],
        'must be {id} or {email}',
      ),
    ),
    v.minLength(1, 'must hold at least 1 contact'),
    v.maxLength(1000, 'must hold at most 1000 contacts'),
  ),
  include: v.optional(v.array(FacetSchema)),
});

const BatchRemoveListSchema = <S extends v.GenericSchema>(item: S) =>
  v.optional(v.pipe(v.array(item), v.maxLength(1000, 'must hold at most 1000 entries')));
export const BatchRemoveBodySchema = v.pipe(
  v.strictObject({
    ids: BatchRemoveListSchema(UuidSchema),
    emails: BatchRemoveListSchema(v.pipe(v.string(), v.maxLength(320, 'is too long'))),
    erase: v.optional(v.boolean(), false),
  }),
  v.check(
    (body) => (body.ids?.length ?? 0) + (body.emails?.length ?? 0) >= 1,
    'ids or emails must name at least 1 contact',
  ),
  v.check(
    (body) => (body.ids?.length ?? 0) + (body.emails?.length ?? 0) <= 1000,
    'ids and emails together must name at most 1000 contacts',
  ),
);

/** The bare array the SDK sends, or `{topics: […]}` as Resend's OpenAPI file has it. */
export const UpdateContactTopicsBodySchema = v.pipe(
  v.union(
    [v.array(TopicChoiceSchema), v.strictObject({ topics: v.array(TopicChoiceSchema) })],
    'must be an array of {id, subscription} or {topics: [...]}',
  ),
  v.transform((body) => (Array.isArray(body) ? body : body.topics)),
  v.maxLength(100, 'must hold at most 100 topics'),
);

// Responses

export const ContactRefSchema = v.object({ object: v.literal('contact'), id: UuidSchema });
export const DeletedContactSchema = v.object({
  object: v.literal('contact'),
  id: UuidSchema,
  contact: UuidSchema,
  deleted: v.literal(true),
});

export const ContactTopicRowSchema = v.object({
  id: UuidSchema,
  name: v.string(),
  description: v.nullable(v.string()),
  subscription: SubscriptionSchema,
  explicit: v.boolean(),
  visibility: v.picklist(['public', 'private']),
});

const PropertyMapSchema = v.record(
  v.string(),
  v.union([
    v.object({ type: v.literal('string'), value: v.string() }),
    v.object({ type: v.literal('number'), value: v.number() }),
  ]),
);

const contactEntries = {
  id: UuidSchema,
  email: v.string(),
  first_name: v.nullable(v.string()),
  last_name: v.nullable(v.string()),
  created_at: TimestampSchema,
  unsubscribed: v.boolean(),
};
export const ContactListItemSchema = v.object({
  ...contactEntries,
  properties: v.optional(PropertyMapSchema),
  topics: v.optional(v.array(ContactTopicRowSchema)),
});
export const ContactSchema = v.pipe(
  v.object({ object: v.literal('contact'), ...contactEntries, properties: PropertyMapSchema }),
  v.metadata({ title: 'Contact' }),
);
export const ContactListSchema = listOf(ContactListItemSchema);

export const BatchCreateResponseSchema = v.object({
  data: v.array(
    v.object({
      object: v.literal('contact'),
      index: v.number(),
      id: UuidSchema,
      status: v.picklist(['created', 'updated', 'skipped']),
    }),
  ),
  counts: v.object({ created: v.number(), updated: v.number(), skipped: v.number(), failed: v.number() }),
  errors: v.array(v.object({ index: v.number(), message: v.string() })),
});

export const BatchGetResponseSchema = v.object({
  object: v.literal('list'),
  data: v.array(ContactListItemSchema),
  missing: v.array(v.object({ index: v.number(), id: v.nullable(v.string()), email: v.nullable(v.string()) })),
});

export const BatchRemoveResponseSchema = v.object({
  data: v.array(v.object({ object: v.literal('contact'), contact: UuidSchema, deleted: v.literal(true) })),
});

export const ContactSegmentSchema = v.object({
  object: v.literal('contact_segment'),
  id: UuidSchema,
  contact_id: UuidSchema,
  segment_id: UuidSchema,
});
export const RemovedContactSegmentSchema = v.object({ ...ContactSegmentSchema.entries, deleted: v.literal(true) });

export const ContactTopicsListSchema = listOf(ContactTopicRowSchema);
export const UpdatedContactTopicsSchema = v.object({
  object: v.literal('contact_topics'),
  id: UuidSchema,
  contact_id: UuidSchema,
  topics: v.array(ContactTopicRowSchema),
});
