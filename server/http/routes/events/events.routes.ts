import {
  createEventDefinition,
  deleteEventDefinition,
  listEventDefinitions,
  requireEventDefinition,
  updateEventDefinition,
} from '../../../services/events/event-definitions.js';
import { sendCustomEvent } from '../../../services/events/send-custom-event.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { presentEvent, presentEventListItem, presentEventRef } from './event.presenter.js';
import { CREATE_EVENT_REQUEST, EVENT, EVENT_LIST_ITEM, EVENT_REF, SEND_EVENT_REQUEST } from './events.examples.js';
import {
  CreateEventBodySchema,
  DeletedEventSchema,
  EventIdentifierParamSchema,
  EventListSchema,
  EventRefSchema,
  EventSchema,
  SendEventBodySchema,
  SentEventSchema,
  UpdateEventBodySchema,
} from './events.schemas.js';

const TAGS = ['Events'];

export const eventRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/events/send',
      operationId: 'sendEvent',
      summary:
        'Send an event for a contact (by id, or by address: a new address becomes a contact); starts the runs it triggers and resumes the waits it satisfies',
      tags: TAGS,
      permission: 'full_access',
      body: SendEventBodySchema,
      responses: { 202: SentEventSchema },
      examples: { request: SEND_EVENT_REQUEST, response: { object: 'event', event: 'cart.abandoned' } },
    },
    async ({ input: { body }, auth, deps }) => {
      const sent = await sendCustomEvent(deps, auth.teamId, {
        event: body.event,
        contactId: body.contact_id,
        email: body.email,
        payload: body.payload ?? {},
      });
      return { object: 'event' as const, event: sent.event };
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/events',
      operationId: 'createEvent',
      summary: 'Define an event: its name and, optionally, the types of its payload keys',
      tags: TAGS,
      permission: 'full_access',
      body: CreateEventBodySchema,
      responses: { 201: EventRefSchema },
      examples: { request: CREATE_EVENT_REQUEST, response: EVENT_REF },
    },
    async ({ input: { body }, auth, deps }) =>
      presentEventRef(await createEventDefinition(deps, auth.teamId, { name: body.name, schema: body.schema ?? null })),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: 'List event definitions, newest first',
      tags: TAGS,
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: EventListSchema },
      examples: { response: exampleList(EVENT_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listEventDefinitions(deps, auth.teamId, query), presentEventListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/events/:identifier',
      operationId: 'getEvent',
      summary: 'Retrieve an event definition by id or name',
      tags: TAGS,
      permission: 'full_access',
      params: EventIdentifierParamSchema,
      responses: { 200: EventSchema },
      examples: { response: EVENT },
    },
    async ({ input: { params }, auth, deps }) =>
      presentEvent(await requireEventDefinition(deps, auth.teamId, params.identifier)),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/events/:identifier',
      operationId: 'updateEvent',
      summary: "Replace an event definition's schema (null clears it)",
      tags: TAGS,
      permission: 'full_access',
      params: EventIdentifierParamSchema,
      body: UpdateEventBodySchema,
      responses: { 200: EventRefSchema },
      examples: { request: { schema: { cart_total: 'number' } }, response: EVENT_REF },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentEventRef(await updateEventDefinition(deps, auth.teamId, params.identifier, body.schema)),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/events/:identifier',
      operationId: 'deleteEvent',
      summary: 'Delete an event definition (events of that name are still accepted, without a schema)',
      tags: TAGS,
      permission: 'full_access',
      params: EventIdentifierParamSchema,
      responses: { 200: DeletedEventSchema },
      examples: { response: { ...EVENT_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => ({
      object: 'event' as const,
      id: await deleteEventDefinition(deps, auth.teamId, params.identifier),
      deleted: true as const,
    }),
  ),
];
