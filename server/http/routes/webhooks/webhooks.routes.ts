import { createWebhook } from '../../../services/webhooks/create-webhook.js';
import { deleteWebhook } from '../../../services/webhooks/delete-webhook.js';
import { getWebhook } from '../../../services/webhooks/get-webhook.js';
import { listWebhooks } from '../../../services/webhooks/list-webhooks.js';
import { rotateWebhookSecret } from '../../../services/webhooks/rotate-webhook-secret.js';
import { updateWebhook } from '../../../services/webhooks/update-webhook.js';
import {
  getWebhookEvent,
  listWebhookAttempts,
  listWebhookEvents,
  replayWebhookEvent,
} from '../../../services/webhooks/webhook-events.js';
import { exampleList, ID } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute, type Route } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import {
  presentCreatedWebhook,
  presentDeletedWebhook,
  presentRotatedWebhook,
  presentWebhook,
  presentWebhookAttempt,
  presentWebhookEvent,
  presentWebhookEventListItem,
  presentWebhookEventRef,
  presentWebhookListItem,
  presentWebhookRef,
} from './webhook.presenter.js';
import {
  SIGNING_SECRET,
  WEBHOOK,
  WEBHOOK_ATTEMPT,
  WEBHOOK_EVENT,
  WEBHOOK_EVENT_LIST_ITEM,
  WEBHOOK_LIST_ITEM,
  WEBHOOK_REF,
} from './webhooks.examples.js';
import {
  CreatedWebhookSchema,
  CreateWebhookBodySchema,
  DeletedWebhookSchema,
  RotatedWebhookSchema,
  RotateWebhookBodySchema,
  UpdateWebhookBodySchema,
  WebhookAttemptSchema,
  WebhookEventListItemSchema,
  WebhookEventParamsSchema,
  WebhookEventRefSchema,
  WebhookEventSchema,
  WebhookListItemSchema,
  WebhookRefSchema,
  WebhookSchema,
} from './webhooks.schemas.js';

const tags = ['Webhooks'];

/** The rotation under its two paths: the spec's, and the one the Node SDK calls (with an empty body). */
const rotateRoute = (path: string, operationId: string) =>
  defineRoute(
    {
      method: 'post',
      path,
      operationId,
      summary: 'Rotate the signing secret',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      body: RotateWebhookBodySchema,
      responses: { 200: RotatedWebhookSchema },
      examples: {
        request: { overlap_hours: 24 },
        response: {
          ...WEBHOOK_REF,
          signing_secret: 'whsec_3J8bXv0c1Yl2WmFqk9QeT5sRzN4aHdPpGt7uIoLyE2M=',
          previous_secret_expires_at: '2026-11-03T14:03:29.081Z',
        },
      },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentRotatedWebhook(
        await rotateWebhookSecret(deps, auth.teamId, params.id, {
          overlapHours: body.overlap_hours,
          signingSecret: body.signing_secret,
        }),
        deps.clock(),
      ),
  );

export const webhookRoutes: Route[] = [
  defineRoute(
    {
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Create a webhook endpoint',
      tags,
      permission: 'full_access',
      body: CreateWebhookBodySchema,
      responses: { 201: CreatedWebhookSchema },
      examples: {
        request: { endpoint: WEBHOOK_LIST_ITEM.endpoint, events: WEBHOOK_LIST_ITEM.events },
        response: { ...WEBHOOK_REF, signing_secret: SIGNING_SECRET },
      },
    },
    async ({ input: { body }, auth, deps }) =>
      presentCreatedWebhook(
        await createWebhook(deps, auth.teamId, {
          url: body.endpoint,
          events: body.events,
          signingSecret: body.signing_secret,
        }),
      ),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints',
      tags,
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(WebhookListItemSchema) },
      examples: { response: exampleList(WEBHOOK_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listWebhooks(deps, auth.teamId, query), presentWebhookListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/webhooks/:id',
      operationId: 'getWebhook',
      summary: 'Get a webhook endpoint with its signing secret',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: WebhookSchema },
      examples: { response: WEBHOOK },
    },
    async ({ input: { params }, auth, deps }) =>
      presentWebhook(await getWebhook(deps, auth.teamId, params.id), deps.clock()),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/webhooks/:id',
      operationId: 'updateWebhook',
      summary: 'Update a webhook endpoint (URL, events, status)',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      body: UpdateWebhookBodySchema,
      responses: { 200: WebhookRefSchema },
      examples: { request: { events: ['*'] }, response: WEBHOOK_REF },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentWebhookRef(
        await updateWebhook(deps, auth.teamId, params.id, {
          url: body.endpoint,
          events: body.events,
          status: body.status,
        }),
      ),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/webhooks/:id',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint and its history',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedWebhookSchema },
      examples: { response: { ...WEBHOOK_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentDeletedWebhook(await deleteWebhook(deps, auth.teamId, params.id)),
  ),
  rotateRoute('/webhooks/:id/rotate', 'rotateWebhookSecret'),
  rotateRoute('/webhooks/:id/signing-secret/rotate', 'rotateWebhookSigningSecret'),
  defineRoute(
    {
      method: 'get',
      path: '/webhooks/:id/events',
      operationId: 'listWebhookEvents',
      summary: 'List the events sent to a webhook endpoint',
      tags,
      permission: 'full_access',
      params: IdParamSchema,
      query: PaginationQuerySchema,
      responses: { 200: listOf(WebhookEventListItemSchema) },
      examples: { response: exampleList(WEBHOOK_EVENT_LIST_ITEM) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(await listWebhookEvents(deps, auth.teamId, params.id, query), presentWebhookEventListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/webhooks/:id/events/:event_id',
      operationId: 'getWebhookEvent',
      summary: 'Get one event sent to a webhook endpoint',
      tags,
      permission: 'full_access',
      params: WebhookEventParamsSchema,
      responses: { 200: WebhookEventSchema },
      examples: { response: WEBHOOK_EVENT },
    },
    async ({ input: { params }, auth, deps }) =>
      presentWebhookEvent(await getWebhookEvent(deps, auth.teamId, params.id, params.event_id)),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/webhooks/:id/events/:event_id/attempts',
      operationId: 'listWebhookEventAttempts',
      summary: 'List the delivery attempts of an event',
      tags,
      permission: 'full_access',
      params: WebhookEventParamsSchema,
      query: PaginationQuerySchema,
      responses: { 200: listOf(WebhookAttemptSchema) },
      examples: { response: exampleList(WEBHOOK_ATTEMPT) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(
        await listWebhookAttempts(deps, auth.teamId, params.id, params.event_id, query),
        presentWebhookAttempt,
      ),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/webhooks/:id/events/:event_id/replay',
      operationId: 'replayWebhookEvent',
      summary: 'Send an event to the endpoint again',
      tags,
      permission: 'full_access',
      params: WebhookEventParamsSchema,
      responses: { 200: WebhookEventRefSchema },
      examples: { response: { object: 'webhook_event', id: ID.webhookEvent } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentWebhookEventRef(await replayWebhookEvent(deps, auth.teamId, params.id, params.event_id)),
  ),
];
