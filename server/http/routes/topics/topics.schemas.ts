import * as v from 'valibot';
import { LineSchema, listOf, TextSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const SubscriptionSchema = v.picklist(['opt_in', 'opt_out'], 'must be opt_in or opt_out');
const VisibilitySchema = v.picklist(['public', 'private'], 'must be public or private');
const TopicNameSchema = v.pipe(
  LineSchema,
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
);
const DescriptionSchema = v.nullable(v.pipe(TextSchema, v.maxLength(1000, 'must be at most 1000 characters')));

export const CreateTopicBodySchema = v.strictObject({
  name: TopicNameSchema,
  default_subscription: SubscriptionSchema,
  description: v.optional(DescriptionSchema),
  visibility: v.optional(VisibilitySchema),
});

/** The SDK sends the topic's `id` in the body as well: declared, and ignored. */
export const UpdateTopicBodySchema = v.strictObject({
  id: v.optional(v.string()),
  name: v.optional(TopicNameSchema),
  description: v.optional(DescriptionSchema),
  default_subscription: v.optional(SubscriptionSchema),
  visibility: v.optional(VisibilitySchema),
});

const topicEntries = {
  id: UuidSchema,
  name: v.string(),
  description: v.nullable(v.string()),
  default_subscription: SubscriptionSchema,
  visibility: VisibilitySchema,
  created_at: TimestampSchema,
};
export const TopicSchema = v.pipe(
  v.object({ object: v.literal('topic'), ...topicEntries }),
  v.metadata({ title: 'Topic' }),
);
export const TopicListSchema = listOf(v.object(topicEntries));
export const TopicRefSchema = v.object({ object: v.literal('topic'), id: UuidSchema });
export const DeletedTopicSchema = v.object({ object: v.literal('topic'), id: UuidSchema, deleted: v.literal(true) });
