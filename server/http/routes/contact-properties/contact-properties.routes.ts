import { createContactProperty } from '../../../services/contact-properties/create-contact-property.js';
import { deleteContactProperty } from '../../../services/contact-properties/delete-contact-property.js';
import { requireContactProperty } from '../../../services/contact-properties/get-contact-property.js';
import { listContactProperties } from '../../../services/contact-properties/list-contact-properties.js';
import { updateContactProperty } from '../../../services/contact-properties/update-contact-property.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import {
  ContactPropertyListSchema,
  ContactPropertyRefSchema,
  ContactPropertySchema,
  CreateContactPropertyBodySchema,
  DeletedContactPropertySchema,
  UpdateContactPropertyBodySchema,
} from './contact-properties.schemas.js';
import { CONTACT_PROPERTY, CONTACT_PROPERTY_LIST_ITEM, CONTACT_PROPERTY_REF } from './contact-properties.examples.js';
import { presentContactProperty, presentContactPropertyListItem } from './contact-property.presenter.js';

const TAGS = ['Contact properties'];

export const contactPropertyRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/contact-properties',
      operationId: 'createContactProperty',
      summary: 'Declare a contact property',
      tags: TAGS,
      permission: 'full_access',
      body: CreateContactPropertyBodySchema,
      responses: { 201: ContactPropertySchema },
      examples: { request: { key: 'plan', type: 'string', fallback_value: 'free' }, response: CONTACT_PROPERTY },
    },
    async ({ input: { body }, auth, deps }) =>
      presentContactProperty(
        await createContactProperty(deps, auth.teamId, {
          key: body.key,
          type: body.type,
          fallbackValue: body.fallback_value,
        }),
      ),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/contact-properties',
      operationId: 'listContactProperties',
      summary: 'List contact properties, newest first',
      tags: TAGS,
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: ContactPropertyListSchema },
      examples: { response: exampleList(CONTACT_PROPERTY_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listContactProperties(deps, auth.teamId, query), presentContactPropertyListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/contact-properties/:id',
      operationId: 'getContactProperty',
      summary: 'Retrieve a contact property',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: ContactPropertySchema },
      examples: { response: CONTACT_PROPERTY },
    },
    async ({ input: { params }, auth, deps }) =>
      presentContactProperty(await requireContactProperty(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/contact-properties/:id',
      operationId: 'updateContactProperty',
      summary: "Change a contact property's fallback value",
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      body: UpdateContactPropertyBodySchema,
      responses: { 200: ContactPropertyRefSchema },
      examples: { request: { fallback_value: 'starter' }, response: CONTACT_PROPERTY_REF },
    },
    async ({ input: { params, body }, auth, deps }) => ({
      object: 'contact_property' as const,
      id: (await updateContactProperty(deps, auth.teamId, params.id, { fallbackValue: body.fallback_value })).id,
    }),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/contact-properties/:id',
      operationId: 'deleteContactProperty',
      summary: "Delete a contact property and every contact's value for it",
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedContactPropertySchema },
      examples: { response: { ...CONTACT_PROPERTY_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => {
      await deleteContactProperty(deps, auth.teamId, params.id);
      return { object: 'contact_property' as const, id: params.id, deleted: true as const };
    },
  ),
];
