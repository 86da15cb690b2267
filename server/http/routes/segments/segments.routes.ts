import * as v from 'valibot';
import { listContacts } from '../../../services/contacts/list-contacts.js';
import { createSegment } from '../../../services/segments/create-segment.js';
import { deleteSegment } from '../../../services/segments/delete-segment.js';
import { getSegment } from '../../../services/segments/get-segment.js';
import { listSegments } from '../../../services/segments/list-segments.js';
import { updateSegment } from '../../../services/segments/update-segment.js';
import { exampleList, ID } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { CONTACT_LIST_ITEM } from '../contacts/contacts.examples.js';
import { presentContactListItem } from '../contacts/contact.presenter.js';
import { ContactListSchema, ListContactsQuerySchema } from '../contacts/contacts.schemas.js';
import { CREATE_SEGMENT_REQUEST, SEGMENT_LIST_ITEM } from './segments.examples.js';
import { presentSegment, presentSegmentListItem, presentSegmentWithCount } from './segment.presenter.js';
import { CreateSegmentBodySchema, segmentSchemas, UpdateSegmentBodySchema } from './segments.schemas.js';

/**
 * /segments, and /audiences served by the same handlers (Resend's older name for them): the
 * `object` of every answer follows the path it was asked on.
 */
function segmentRoutesAt(object: 'segment' | 'audience') {
  const base = `/${object}s`;
  const name = object === 'segment' ? 'Segment' : 'Audience';
  const tags = [`${name}s`];
  const a = object === 'audience' ? 'an' : 'a';
  const schemas = segmentSchemas(object);
  return [
    defineRoute(
      {
        method: 'post',
        path: base,
        operationId: `create${name}`,
        summary: `Create ${a} ${object}`,
        tags,
        permission: 'full_access',
        body: CreateSegmentBodySchema,
        responses: { 201: schemas.created },
        examples: { request: CREATE_SEGMENT_REQUEST, response: { object, ...SEGMENT_LIST_ITEM } },
      },
      async ({ input: { body }, auth, deps }) => presentSegment(object, await createSegment(deps, auth.teamId, body)),
    ),
    defineRoute(
      {
        method: 'get',
        path: base,
        operationId: `list${name}s`,
        summary: `List ${object}s, newest first`,
        tags,
        permission: 'full_access',
        query: PaginationQuerySchema,
        responses: { 200: listOf(schemas.item) },
        examples: { response: exampleList(SEGMENT_LIST_ITEM) },
      },
      async ({ input: { query }, auth, deps }) =>
        presentList(await listSegments(deps, auth.teamId, query), presentSegmentListItem),
    ),
    defineRoute(
      {
        method: 'get',
        path: `${base}/:id`,
        operationId: `get${name}`,
        summary: `Retrieve ${a} ${object} with its contact count`,
        tags,
        permission: 'full_access',
        params: IdParamSchema,
        responses: { 200: schemas.full },
        examples: { response: { object, ...SEGMENT_LIST_ITEM, contact_count: 1284 } },
      },
      async ({ input: { params }, auth, deps }) => {
        const { segment, contactCount } = await getSegment(deps, auth.teamId, params.id);
        return presentSegmentWithCount(object, segment, contactCount);
      },
    ),
    defineRoute(
      {
        method: 'patch',
        path: `${base}/:id`,
        operationId: `update${name}`,
        summary: `Rename ${a} ${object} or change its filter`,
        tags,
        permission: 'full_access',
        params: IdParamSchema,
        body: UpdateSegmentBodySchema,
        responses: { 200: schemas.ref },
        examples: { request: { name: 'Pro and Scale customers' }, response: { object, id: ID.segment } },
      },
      async ({ input: { params, body }, auth, deps }) => ({
        object,
        id: (await updateSegment(deps, auth.teamId, params.id, body)).id,
      }),
    ),
    defineRoute(
      {
        method: 'delete',
        path: `${base}/:id`,
        operationId: `delete${name}`,
        summary: `Delete ${a} ${object} (its contacts stay)`,
        tags,
        permission: 'full_access',
        params: IdParamSchema,
        responses: { 200: schemas.deleted },
        examples: { response: { object, id: ID.segment, deleted: true } },
      },
      async ({ input: { params }, auth, deps }) => {
        await deleteSegment(deps, auth.teamId, params.id);
        return { object, id: params.id, deleted: true as const };
      },
    ),
  ];
}

export const segmentRoutes = [
  ...segmentRoutesAt('segment'),
  defineRoute(
    {
      method: 'get',
      path: '/segments/:id/contacts',
      operationId: 'listSegmentContacts',
      summary: "List a segment's contacts, newest first",
      tags: ['Segments'],
      permission: 'full_access',
      params: v.object({ id: IdParamSchema.entries.id }),
      query: ListContactsQuerySchema,
      responses: { 200: ContactListSchema },
      examples: { response: exampleList(CONTACT_LIST_ITEM) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(
        await listContacts(deps, auth.teamId, { ...query, segmentId: params.id, include: query.include }),
        presentContactListItem,
      ),
  ),
];

export const audienceRoutes = segmentRoutesAt('audience');
