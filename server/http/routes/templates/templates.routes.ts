import type { TemplateVariable } from '../../../entities/index.js';
import { getTemplate, listTemplates } from '../../../services/templates/find-templates.js';
import { publishTemplate } from '../../../services/templates/publish-template.js';
import { removeTemplate } from '../../../services/templates/remove-template.js';
import {
  createTemplate,
  duplicateTemplate,
  type TemplateFields,
  updateTemplate,
} from '../../../services/templates/save-template.js';
import { exampleList, ID } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { CREATE_TEMPLATE_REQUEST, TEMPLATE, TEMPLATE_LIST_ITEM, TEMPLATE_REF } from './templates.examples.js';
import {
  presentDeletedTemplate,
  presentTemplate,
  presentTemplateListItem,
  presentTemplateRef,
} from './template.presenter.js';
import {
  CreateTemplateBodySchema,
  DeletedTemplateSchema,
  IdOrAliasParamSchema,
  type TemplateBodyOutput,
  TemplateListItemSchema,
  TemplateRefSchema,
  TemplateSchema,
  UpdateTemplateBodySchema,
} from './templates.schemas.js';

/** The wire's fields as the service takes them; absent ones stay undefined (unchanged on update). */
function toTemplateFields(body: TemplateBodyOutput): Partial<TemplateFields> {
  return {
    name: body.name,
    html: body.html,
    alias: body.alias,
    subject: body.subject,
    text: body.text,
    variables:
      body.variables === undefined
        ? undefined
        : (body.variables ?? []).map((v): TemplateVariable => ({
            key: v.key,
            type: v.type,
            fallbackValue: v.fallback_value,
          })),
  };
}

const ref = { permission: 'full_access', params: IdOrAliasParamSchema } as const;

export const templateRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/templates',
      operationId: 'createTemplate',
      summary: 'Create a template (a draft until published)',
      tags: ['Templates'],
      permission: 'full_access',
      body: CreateTemplateBodySchema,
      responses: { 201: TemplateRefSchema },
      examples: { request: CREATE_TEMPLATE_REQUEST, response: TEMPLATE_REF },
    },
    async ({ input: { body }, auth, deps }) => {
      const fields = toTemplateFields(body);
      const created = await createTemplate(deps, auth.teamId, {
        name: body.name,
        html: body.html,
        alias: fields.alias ?? null,
        subject: fields.subject ?? null,
        text: fields.text ?? null,
        variables: fields.variables ?? [],
      });
      return presentTemplateRef(created);
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/templates',
      operationId: 'listTemplates',
      summary: 'List templates, newest first',
      tags: ['Templates'],
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(TemplateListItemSchema) },
      examples: { response: exampleList(TEMPLATE_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listTemplates(deps, auth.teamId, query), presentTemplateListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/templates/:idOrAlias',
      operationId: 'getTemplate',
      summary: 'Retrieve a template by id or alias',
      tags: ['Templates'],
      ...ref,
      responses: { 200: TemplateSchema },
      examples: { response: TEMPLATE },
    },
    async ({ input: { params }, auth, deps }) =>
      presentTemplate(await getTemplate(deps, auth.teamId, params.idOrAlias)),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/templates/:idOrAlias',
      operationId: 'updateTemplate',
      summary: "Edit a template's draft; sends keep the published version until it is published again",
      tags: ['Templates'],
      ...ref,
      body: UpdateTemplateBodySchema,
      responses: { 200: TemplateRefSchema },
      examples: { request: { subject: 'Order #{{{order_number}}} is on its way' }, response: TEMPLATE_REF },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentTemplateRef(await updateTemplate(deps, auth.teamId, params.idOrAlias, toTemplateFields(body))),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/templates/:idOrAlias',
      operationId: 'removeTemplate',
      summary: 'Delete a template',
      tags: ['Templates'],
      ...ref,
      responses: { 200: DeletedTemplateSchema },
      examples: { response: { ...TEMPLATE_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentDeletedTemplate(await removeTemplate(deps, auth.teamId, params.idOrAlias)),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/templates/:idOrAlias/publish',
      operationId: 'publishTemplate',
      summary: 'Publish the draft: sends use this version from now on',
      tags: ['Templates'],
      ...ref,
      responses: { 200: TemplateRefSchema },
      examples: { response: TEMPLATE_REF },
    },
    async ({ input: { params }, auth, deps }) =>
      presentTemplateRef(await publishTemplate(deps, auth.teamId, params.idOrAlias)),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/templates/:idOrAlias/duplicate',
      operationId: 'duplicateTemplate',
      summary: "Copy a template's draft into a new draft",
      tags: ['Templates'],
      ...ref,
      responses: { 200: TemplateRefSchema },
      examples: { response: { object: 'template', id: ID.copiedTemplate } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentTemplateRef(await duplicateTemplate(deps, auth.teamId, params.idOrAlias)),
  ),
];
