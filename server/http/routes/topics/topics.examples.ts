import type * as v from 'valibot';
import { CREATED_AT, ID } from '../../examples.js';
import type { CreateTopicBodySchema, TopicListSchema, TopicSchema } from './topics.schemas.js';

const TOPIC_FIELDS = {
  name: 'Product updates',
  description: 'New features and improvements, about once a month.',
  default_subscription: 'opt_in',
  visibility: 'public',
} as const;

export const CREATE_TOPIC_REQUEST: v.InferInput<typeof CreateTopicBodySchema> = TOPIC_FIELDS;

export const TOPIC_LIST_ITEM: v.InferInput<typeof TopicListSchema>['data'][number] = {
  id: ID.topic,
  ...TOPIC_FIELDS,
  created_at: CREATED_AT,
};

export const TOPIC: v.InferInput<typeof TopicSchema> = { object: 'topic', ...TOPIC_LIST_ITEM };

export const TOPIC_REF = { object: 'topic', id: ID.topic } as const;
