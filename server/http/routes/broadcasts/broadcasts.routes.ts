import type * as v from 'valibot';
import {
  createBroadcast,
  deleteBroadcast,
  duplicateBroadcast,
  updateBroadcast,
} from '../../../services/broadcasts/save-broadcast.js';
import {
  listBroadcastClickedLinks,
  listBroadcastRecipients,
} from '../../../services/broadcasts/broadcast-analytics.js';
import { getBroadcast, listBroadcasts } from '../../../services/broadcasts/find-broadcasts.js';
import { cancelBroadcast, sendBroadcast } from '../../../services/broadcasts/send-broadcast.js';
import { exampleList, ID } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import {
  BROADCAST,
  BROADCAST_LIST_ITEM,
  BROADCAST_REF,
  BROADCAST_SENT,
  CREATE_BROADCAST_REQUEST,
} from './broadcasts.examples.js';
import {
  presentBroadcast,
  presentBroadcastListItem,
  presentBroadcastRecipient,
  presentBroadcastSent,
  presentClickedLink,
} from './broadcast.presenter.js';
import {
  BroadcastClickedLinkSchema,
  BroadcastRecipientSchema,
  BroadcastRecipientsQuerySchema,
  ClickedLinksQuerySchema,
  BroadcastListItemSchema,
  BroadcastRefSchema,
  BroadcastSchema,
  BroadcastSentSchema,
  CanceledBroadcastSchema,
  CreateBroadcastBodySchema,
  DeletedBroadcastSchema,
  SendBroadcastBodySchema,
  UpdateBroadcastBodySchema,
} from './broadcasts.schemas.js';

const tags = ['Broadcasts'];

type ContentBody = v.InferOutput<typeof UpdateBroadcastBodySchema>;

const fieldsOf = (body: ContentBody) => ({
  name: body.name,
  segmentId: body.segment_id ?? body.audience_id,
  from: body.from,
  subject: body.subject,
  replyTo: body.reply_to,
  previewText: body.preview_text,
  html: body.html,
  text: body.text,
  topicId: body.topic_id,
});

export const broadcastRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/broadcasts',
      operationId: 'createBroadcast',
      summary: 'Create a broadcast (a draft, or sent at once with `send`)',
      tags,
      permission: 'full_access',
      body: CreateBroadcastBodySchema,
      responses: { 201: BroadcastSentSchema },
      examples: { request: CREATE_BROADCAST_REQUEST, response: BROADCAST_SENT },
    },
    async ({ input: { body }, auth, deps }) => {
      const fields = fieldsOf(body);
      const broadcast = await createBroadcast(deps, auth, {
        ...fields,
        segmentId: fields.segmentId!,
        from: fields.from!,
        subject: fields.subject!,
      });
      if (!body.send) return presentBroadcastSent(broadcast.id, null);
      try {
        return presentBroadcastSent(
          broadcast.id,
          await sendBroadcast(deps, auth, broadcast.id, body.scheduled_at ?? null),
        );
      } catch (err) {
        // Refused sends (too large, no body) leave nothing behind.
        await deleteBroadcast(deps, auth.teamId, broadcast.id);
        throw err;
      }
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/broadcasts',
      operationId: 'listBroadcasts',
      summary: 'List broadcasts, newest first',
      tags,
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(BroadcastListItemSchema) },
      examples: { response: exampleList(BROADCAST_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listBroadcasts(deps, auth.teamId, query), presentBroadcastListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/broadcasts/:id',
      operationId: 'getBroadcast',
      summary: 'Retrieve a broadcast with its progress',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: BroadcastSchema },
      examples: { response: BROADCAST },
    },
    async ({ input: { params }, auth, deps }) => presentBroadcast(await getBroadcast(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/broadcasts/:id',
      operationId: 'updateBroadcast',
      summary: 'Change a draft broadcast',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      body: UpdateBroadcastBodySchema,
      responses: { 200: BroadcastRefSchema },
      examples: { request: { subject: 'What shipped in November at Acme' }, response: BROADCAST_REF },
    },
    async ({ input: { params, body }, auth, deps }) => ({
      object: 'broadcast' as const,
      id: (await updateBroadcast(deps, auth, params.id, fieldsOf(body))).id,
    }),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/broadcasts/:id',
      operationId: 'deleteBroadcast',
      summary: 'Delete a draft or finished broadcast (its emails stay)',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedBroadcastSchema },
      examples: { response: { ...BROADCAST_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => {
      await deleteBroadcast(deps, auth.teamId, params.id);
      return { object: 'broadcast' as const, id: params.id, deleted: true as const };
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/broadcasts/:id/send',
      operationId: 'sendBroadcast',
      summary: 'Send a draft broadcast now or at `scheduled_at`',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      body: SendBroadcastBodySchema,
      responses: { 200: BroadcastSentSchema },
      examples: { request: { scheduled_at: 'tomorrow at 9am' }, response: BROADCAST_SENT },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentBroadcastSent(params.id, await sendBroadcast(deps, auth, params.id, body.scheduled_at ?? null)),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/broadcasts/:id/cancel',
      operationId: 'cancelBroadcast',
      summary: 'Cancel a scheduled or sending broadcast',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: CanceledBroadcastSchema },
      examples: { response: { ...BROADCAST_REF, canceled_remaining: 469 } },
    },
    async ({ input: { params }, auth, deps }) => ({
      object: 'broadcast' as const,
      id: params.id,
      canceled_remaining: (await cancelBroadcast(deps, auth.teamId, params.id)).canceledRemaining,
    }),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/broadcasts/:id/duplicate',
      operationId: 'duplicateBroadcast',
      summary: 'Copy a broadcast into a new draft',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: BroadcastRefSchema },
      examples: { response: { object: 'broadcast', id: ID.copiedBroadcast } },
    },
    async ({ input: { params }, auth, deps }) => ({
      object: 'broadcast' as const,
      id: (await duplicateBroadcast(deps, auth.teamId, params.id)).id,
    }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/broadcasts/:id/recipients',
      operationId: 'listBroadcastRecipients',
      summary: 'The recipients of a broadcast to whom something happened (sent, opened, bounced…)',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      query: BroadcastRecipientsQuerySchema,
      responses: { 200: listOf(BroadcastRecipientSchema) },
      examples: {
        response: exampleList({
          id: 'cjo0ZDJjYmQ5MS0xYzFmLTRlNmUtYjYwNy1kYjE2NWEwNjgxZjE',
          contact_id: ID.contact,
          email: 'jane@example.com',
          count: 2,
        }),
      },
    },
    async ({ input: { params, query }, auth, deps }) => {
      const page = await listBroadcastRecipients(deps, auth.teamId, params.id, {
        type: query.type,
        email: query.email,
        bounceType: query.bounce_type,
        page: { limit: query.limit, after: query.after, before: query.before },
      });
      return presentList({ data: page.rows, hasMore: page.hasMore }, presentBroadcastRecipient);
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/broadcasts/:id/clicked-links',
      operationId: 'listBroadcastClickedLinks',
      summary: 'The links of a broadcast its recipients clicked, with clicks and unique clicks',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      query: ClickedLinksQuerySchema,
      responses: { 200: listOf(BroadcastClickedLinkSchema) },
      examples: {
        response: exampleList({
          id: 'bDpodHRwczovL2FjbWUudGVzdC9wcmljaW5n',
          url: 'https://acme.test/pricing',
          clicks: 42,
          unique_clicks: 30,
        }),
      },
    },
    async ({ input: { params, query }, auth, deps }) => {
      const page = await listBroadcastClickedLinks(deps, auth.teamId, params.id, {
        limit: query.limit,
        after: query.after,
        before: query.before,
      });
      return presentList({ data: page.rows, hasMore: page.hasMore }, presentClickedLink);
    },
  ),
];
