import { createTopic } from '../../../services/topics/create-topic.js';
import { deleteTopic } from '../../../services/topics/delete-topic.js';
import { requireTopic } from '../../../services/topics/get-topic.js';
import { listTopics } from '../../../services/topics/list-topics.js';
import { updateTopic } from '../../../services/topics/update-topic.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { CREATE_TOPIC_REQUEST, TOPIC, TOPIC_LIST_ITEM, TOPIC_REF } from './topics.examples.js';
import { presentTopic, presentTopicListItem } from './topic.presenter.js';
import {
  CreateTopicBodySchema,
  DeletedTopicSchema,
  TopicListSchema,
  TopicRefSchema,
  TopicSchema,
  UpdateTopicBodySchema,
} from './topics.schemas.js';

const TAGS = ['Topics'];

export const topicRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/topics',
      operationId: 'createTopic',
      summary: 'Create a topic',
      tags: TAGS,
      permission: 'full_access',
      body: CreateTopicBodySchema,
      responses: { 201: TopicSchema },
      examples: { request: CREATE_TOPIC_REQUEST, response: TOPIC },
    },
    async ({ input: { body }, auth, deps }) =>
      presentTopic(
        await createTopic(deps, auth.teamId, {
          name: body.name,
          description: body.description,
          defaultSubscription: body.default_subscription,
          visibility: body.visibility,
        }),
      ),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/topics',
      operationId: 'listTopics',
      summary: 'List topics, newest first',
      tags: TAGS,
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: TopicListSchema },
      examples: { response: exampleList(TOPIC_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listTopics(deps, auth.teamId, query), presentTopicListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/topics/:id',
      operationId: 'getTopic',
      summary: 'Retrieve a topic',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: TopicSchema },
      examples: { response: TOPIC },
    },
    async ({ input: { params }, auth, deps }) => presentTopic(await requireTopic(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/topics/:id',
      operationId: 'updateTopic',
      summary: 'Update a topic (a new default flips contacts without a choice of their own)',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      body: UpdateTopicBodySchema,
      responses: { 200: TopicRefSchema },
      examples: { request: { default_subscription: 'opt_out' }, response: TOPIC_REF },
    },
    async ({ input: { params, body }, auth, deps }) => {
      const topic = await updateTopic(deps, auth.teamId, params.id, {
        name: body.name,
        description: body.description,
        defaultSubscription: body.default_subscription,
        visibility: body.visibility,
      });
      return { object: 'topic' as const, id: topic.id };
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/topics/:id',
      operationId: 'deleteTopic',
      summary: "Delete a topic and every contact's choice for it",
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedTopicSchema },
      examples: { response: { ...TOPIC_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => {
      await deleteTopic(deps, auth.teamId, params.id);
      return { object: 'topic' as const, id: params.id, deleted: true as const };
    },
  ),
];
