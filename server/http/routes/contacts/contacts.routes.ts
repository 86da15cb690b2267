import * as v from 'valibot';
import { type ApiError, validationError } from '../../../errors.js';
import {
  addContactToSegment,
  listContactSegments,
  removeContactFromSegment,
} from '../../../services/contacts/contact-segments.js';
import { listContactTopics, updateContactTopics } from '../../../services/contacts/contact-topics.js';
import { createContact } from '../../../services/contacts/create-contact.js';
import { type ContactInput, createContacts, type IndexedContact } from '../../../services/contacts/create-contacts.js';
import { deleteContact, deleteContacts } from '../../../services/contacts/delete-contacts.js';
import { type ContactRef, getContact, getContacts } from '../../../services/contacts/get-contacts.js';
import { listContacts } from '../../../services/contacts/list-contacts.js';
import { updateContact } from '../../../services/contacts/update-contact.js';
import { issueToApiError } from '../../middleware/validate.js';
import { exampleList, ID, OTHER_RECIPIENT } from '../../examples.js';
import { presentList } from '../../presenters.js';
import type { AppContext } from '../../context.js';
import { defineRoute } from '../../route.js';
import { PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { SEGMENT_LIST_ITEM } from '../segments/segments.examples.js';
import { presentSegmentListItem } from '../segments/segment.presenter.js';
import { segmentSchemas } from '../segments/segments.schemas.js';
import {
  presentContact,
  presentContactListItem,
  presentContactRef,
  presentContactSegment,
  presentContactTopic,
  presentContactTopics,
  presentDeletedContact,
} from './contact.presenter.js';
import {
  CONTACT,
  CONTACT_LIST_ITEM,
  CONTACT_REF,
  CONTACT_SEGMENT,
  CONTACT_TOPIC,
  CREATE_CONTACT_REQUEST,
  CREATE_CONTACTS_REQUEST,
} from './contacts.examples.js';
import {
  AudienceContactParamSchema,
  BatchCreateBodySchema,
  BatchCreateQuerySchema,
  BatchCreateResponseSchema,
  BatchGetBodySchema,
  BatchGetResponseSchema,
  BatchRemoveBodySchema,
  BatchRemoveResponseSchema,
  BatchValidationHeaderSchema,
  type CreateContactBodyOutput,
  CreateContactBodySchema,
  ContactListSchema,
  ContactParamSchema,
  ContactRefSchema,
  ContactSchema,
  ContactSegmentParamSchema,
  ContactSegmentSchema,
  ContactTopicsListSchema,
  DeleteContactQuerySchema,
  DeletedContactSchema,
  ListContactsQuerySchema,
  RemovedContactSegmentSchema,
  UpdateContactBodySchema,
  UpdateContactTopicsBodySchema,
  UpdatedContactTopicsSchema,
} from './contacts.schemas.js';

const TAGS = ['Contacts'];

/** The wire's snake_case item, as the contact services take it (null reads as "not given" on create). */
export function toContactInput(body: CreateContactBodyOutput, extraSegment?: string): ContactInput {
  const segments = [...(body.segments ?? []), ...(extraSegment ? [extraSegment] : [])];
  return {
    email: body.email,
    firstName: body.first_name ?? undefined,
    lastName: body.last_name ?? undefined,
    unsubscribed: body.unsubscribed ?? undefined,
    properties: body.properties ?? undefined,
    segments,
    topics: body.topics ?? undefined,
  };
}

/** Items are checked one by one; the service judges the refused ones with the rest (strict or permissive). */
function parseBatch(items: unknown[], ctx: AppContext) {
  const mode = v.safeParse(BatchValidationHeaderSchema, ctx.get('x-batch-validation') || undefined);
  if (!mode.success) throw validationError(`x-batch-validation: ${mode.issues[0].message}`);
  const accepted: IndexedContact[] = [];
  const rejected: { index: number; error: ApiError }[] = [];
  for (const [index, item] of items.entries()) {
    const parsed = v.safeParse(CreateContactBodySchema, item);
    if (parsed.success) accepted.push({ index, contact: toContactInput(parsed.output) });
    else rejected.push({ index, error: issueToApiError(parsed.issues[0]) });
  }
  return { validation: mode.output, accepted, rejected };
}

const segmentItem = segmentSchemas('segment').item;

/** The contact routes that also answer under /audiences/{audienceId}/contacts (contacts belong to the team). */
function contactItemRoutes(
  prefix: '/contacts' | '/audiences/:audienceId/contacts',
  ids: { get: string; update: string; remove: string },
) {
  const params = prefix === '/contacts' ? ContactParamSchema : AudienceContactParamSchema;
  return [
    defineRoute(
      {
        method: 'get',
        path: `${prefix}/:id`,
        operationId: ids.get,
        summary: 'Retrieve a contact by id or email, with its properties',
        tags: TAGS,
        permission: 'full_access',
        params,
        responses: { 200: ContactSchema },
        examples: { response: CONTACT },
      },
      async ({ input: { params }, auth, deps }) => presentContact(await getContact(deps, auth.teamId, params.id)),
    ),
    defineRoute(
      {
        method: 'patch',
        path: `${prefix}/:id`,
        operationId: ids.update,
        summary: 'Update a contact by id or email',
        tags: TAGS,
        permission: 'full_access',
        params,
        body: UpdateContactBodySchema,
        responses: { 200: ContactRefSchema },
        examples: { request: { first_name: 'Janet', properties: { plan: 'scale', seats: 40 } }, response: CONTACT_REF },
      },
      async ({ input: { params, body }, auth, deps }) => {
        const contact = await updateContact(deps, auth.teamId, params.id, {
          email: body.email,
          firstName: body.first_name,
          lastName: body.last_name,
          unsubscribed: body.unsubscribed,
          properties: body.properties,
        });
        return presentContactRef(contact.id);
      },
    ),
    defineRoute(
      {
        method: 'delete',
        path: `${prefix}/:id`,
        operationId: ids.remove,
        summary: 'Delete a contact by id or email (`erase=true` also scrubs its address from history)',
        tags: TAGS,
        permission: 'full_access',
        params,
        query: DeleteContactQuerySchema,
        responses: { 200: DeletedContactSchema },
        examples: { response: { ...CONTACT_REF, contact: ID.contact, deleted: true } },
      },
      async ({ input: { params, query }, auth, deps }) =>
        presentDeletedContact((await deleteContact(deps, auth.teamId, params.id, { erase: query.erase })).id),
    ),
  ];
}

export const contactRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/contacts',
      operationId: 'createContact',
      summary: 'Create a contact (a known address answers with its id)',
      tags: TAGS,
      permission: 'full_access',
      body: CreateContactBodySchema,
      responses: { 201: ContactRefSchema },
      examples: { request: CREATE_CONTACT_REQUEST, response: CONTACT_REF },
    },
    async ({ input: { body }, auth, deps }) =>
      presentContactRef((await createContact(deps, auth.teamId, toContactInput(body))).id),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/contacts',
      operationId: 'listContacts',
      summary: 'List contacts, newest first',
      tags: TAGS,
      permission: 'full_access',
      query: ListContactsQuerySchema,
      responses: { 200: ContactListSchema },
      examples: { response: exampleList(CONTACT_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(
        await listContacts(deps, auth.teamId, { ...query, segmentId: query.segment_id, include: query.include }),
        presentContactListItem,
      ),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/contacts/batch',
      operationId: 'createContactsBatch',
      summary: 'Create or merge 1 to 1000 contacts',
      tags: TAGS,
      permission: 'full_access',
      query: BatchCreateQuerySchema,
      body: BatchCreateBodySchema,
      responses: { 200: BatchCreateResponseSchema },
      examples: {
        request: CREATE_CONTACTS_REQUEST,
        response: {
          data: [
            { ...CONTACT_REF, index: 0, status: 'created' },
            { object: 'contact', index: 1, id: ID.otherContact, status: 'updated' },
          ],
          counts: { created: 1, updated: 1, skipped: 0, failed: 0 },
          errors: [],
        },
      },
    },
    async ({ input: { query, body }, auth, deps, ctx }) => {
      const { validation, accepted, rejected } = parseBatch(body, ctx);
      const result = await createContacts(deps, auth.teamId, accepted, {
        onConflict: query.on_conflict,
        validation,
        source: 'api',
        label: (i) => `contacts.${i}: `,
        rejected,
      });
      return {
        data: result.data.map((d) => ({ object: 'contact' as const, ...d })),
        counts: result.counts,
        errors: result.errors,
      };
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/contacts/batch/get',
      operationId: 'getContactsBatch',
      summary: 'Retrieve 1 to 1000 contacts by id or email',
      tags: TAGS,
      permission: 'full_access',
      body: BatchGetBodySchema,
      responses: { 200: BatchGetResponseSchema },
      examples: {
        request: { contacts: [{ id: ID.contact }, { email: 'nobody@example.com' }], include: ['properties', 'topics'] },
        response: {
          object: 'list',
          data: [CONTACT_LIST_ITEM],
          missing: [{ index: 1, id: null, email: 'nobody@example.com' }],
        },
      },
    },
    async ({ input: { body }, auth, deps }) => {
      const { data, missing } = await getContacts(deps, auth.teamId, body.contacts as ContactRef[], body.include ?? []);
      return { object: 'list' as const, data: data.map(presentContactListItem), missing };
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/contacts/batch/remove',
      operationId: 'removeContactsBatch',
      summary: 'Delete 1 to 1000 contacts by id or email',
      tags: TAGS,
      permission: 'full_access',
      body: BatchRemoveBodySchema,
      responses: { 200: BatchRemoveResponseSchema },
      examples: {
        request: { ids: [ID.contact], emails: [OTHER_RECIPIENT.email] },
        response: {
          data: [
            { object: 'contact', contact: ID.contact, deleted: true },
            { object: 'contact', contact: ID.otherContact, deleted: true },
          ],
        },
      },
    },
    async ({ input: { body }, auth, deps }) => {
      const deleted = await deleteContacts(
        deps,
        auth.teamId,
        { ids: body.ids, emails: body.emails },
        { erase: body.erase },
      );
      return { data: deleted.map((c) => ({ object: 'contact' as const, contact: c.id, deleted: true as const })) };
    },
  ),
  ...contactItemRoutes('/contacts', { get: 'getContact', update: 'updateContact', remove: 'deleteContact' }),
  defineRoute(
    {
      method: 'get',
      path: '/contacts/:id/segments',
      operationId: 'listContactSegments',
      summary: "List a contact's segments",
      tags: TAGS,
      permission: 'full_access',
      params: ContactParamSchema,
      query: PaginationQuerySchema,
      responses: { 200: listOfSegments() },
      examples: { response: exampleList(SEGMENT_LIST_ITEM) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(await listContactSegments(deps, auth.teamId, params.id, query), presentSegmentListItem),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/contacts/:id/segments/:segmentId',
      operationId: 'addContactSegment',
      summary: 'Add a contact to a segment',
      tags: TAGS,
      permission: 'full_access',
      params: ContactSegmentParamSchema,
      responses: { 200: ContactSegmentSchema },
      examples: { response: CONTACT_SEGMENT },
    },
    async ({ input: { params }, auth, deps }) =>
      presentContactSegment(
        (await addContactToSegment(deps, auth.teamId, params.id, params.segmentId)).contactId,
        params.segmentId,
      ),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/contacts/:id/segments/:segmentId',
      operationId: 'removeContactSegment',
      summary: 'Remove a contact from a segment',
      tags: TAGS,
      permission: 'full_access',
      params: ContactSegmentParamSchema,
      responses: { 200: RemovedContactSegmentSchema },
      examples: { response: { ...CONTACT_SEGMENT, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => ({
      ...presentContactSegment(
        (await removeContactFromSegment(deps, auth.teamId, params.id, params.segmentId)).contactId,
        params.segmentId,
      ),
      deleted: true as const,
    }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/contacts/:id/topics',
      operationId: 'listContactTopics',
      summary: "A contact's effective choice for every topic",
      tags: TAGS,
      permission: 'full_access',
      params: ContactParamSchema,
      query: PaginationQuerySchema,
      responses: { 200: ContactTopicsListSchema },
      examples: { response: exampleList(CONTACT_TOPIC) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(await listContactTopics(deps, auth.teamId, params.id, query), presentContactTopic),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/contacts/:id/topics',
      operationId: 'updateContactTopics',
      summary: "Set a contact's topic choices",
      tags: TAGS,
      permission: 'full_access',
      params: ContactParamSchema,
      body: UpdateContactTopicsBodySchema,
      responses: { 200: UpdatedContactTopicsSchema },
      examples: {
        request: [{ id: ID.topic, subscription: 'opt_out' }],
        response: {
          object: 'contact_topics',
          id: ID.contact,
          contact_id: ID.contact,
          topics: [{ ...CONTACT_TOPIC, subscription: 'opt_out' }],
        },
      },
    },
    async ({ input: { params, body }, auth, deps }) => {
      const { contact, topics } = await updateContactTopics(deps, auth.teamId, params.id, body);
      return presentContactTopics(contact, topics);
    },
  ),
];

function listOfSegments() {
  return v.object({ object: v.literal('list'), data: v.array(segmentItem), has_more: v.boolean() });
}

/** Resend's older audience-scoped contact calls: the same contacts, and a create also joins the audience's segment. */
export const audienceContactRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/audiences/:audienceId/contacts',
      operationId: 'createAudienceContact',
      summary: 'Create a contact in an audience (alias of POST /contacts)',
      tags: ['Audiences'],
      permission: 'full_access',
      params: v.object({ audienceId: AudienceContactParamSchema.entries.audienceId }),
      body: CreateContactBodySchema,
      responses: { 201: ContactRefSchema },
      examples: { request: CREATE_CONTACT_REQUEST, response: CONTACT_REF },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentContactRef((await createContact(deps, auth.teamId, toContactInput(body, params.audienceId))).id),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/audiences/:audienceId/contacts',
      operationId: 'listAudienceContacts',
      summary: "List an audience's contacts (alias of GET /segments/{id}/contacts)",
      tags: ['Audiences'],
      permission: 'full_access',
      params: v.object({ audienceId: AudienceContactParamSchema.entries.audienceId }),
      query: ListContactsQuerySchema,
      responses: { 200: ContactListSchema },
      examples: { response: exampleList(CONTACT_LIST_ITEM) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(
        await listContacts(deps, auth.teamId, { ...query, segmentId: params.audienceId, include: query.include }),
        presentContactListItem,
      ),
  ),
  ...contactItemRoutes('/audiences/:audienceId/contacts', {
    get: 'getAudienceContact',
    update: 'updateAudienceContact',
    remove: 'deleteAudienceContact',
  }),
];
