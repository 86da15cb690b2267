import { addSuppressions } from '../../../services/suppressions/add-suppression.js';
import { getSuppression, listSuppressions } from '../../../services/suppressions/find-suppressions.js';
import { removeSuppressions } from '../../../services/suppressions/remove-suppressions.js';
import { notFound } from '../../../errors.js';
import { exampleList, ID } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { listOf } from '../../schemas/common.schemas.js';
import { SUPPRESSION_LIST_ITEM, SUPPRESSION_REF } from './suppressions.examples.js';
import {
  presentDeletedSuppression,
  presentSuppression,
  presentSuppressionListItem,
  presentSuppressionRef,
} from './suppression.presenter.js';
import {
  AddSuppressionBodySchema,
  BatchAddSuppressionsBodySchema,
  BatchRemoveSuppressionsBodySchema,
  DeletedSuppressionListSchema,
  DeletedSuppressionSchema,
  IdOrEmailParamSchema,
  ListSuppressionsQuerySchema,
  SuppressionListItemSchema,
  SuppressionRefListSchema,
  SuppressionRefSchema,
  SuppressionSchema,
} from './suppressions.schemas.js';

export const suppressionRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/suppressions',
      operationId: 'addSuppression',
      summary: 'Add an address to the suppression list',
      tags: ['Suppressions'],
      permission: 'full_access',
      body: AddSuppressionBodySchema,
      responses: { 201: SuppressionRefSchema },
      examples: { request: { email: SUPPRESSION_LIST_ITEM.email }, response: SUPPRESSION_REF },
    },
    async ({ input: { body }, auth, deps }) => {
      const [entry] = await deps.orm.em.transactional((em) =>
        addSuppressions(deps, em, { teamId: auth.teamId, emails: [body.email], origin: 'manual', source: 'api' }),
      );
      return presentSuppressionRef(entry!);
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/suppressions/batch/add',
      operationId: 'batchAddSuppressions',
      summary: 'Add up to 1,000 addresses to the suppression list',
      tags: ['Suppressions'],
      permission: 'full_access',
      body: BatchAddSuppressionsBodySchema,
      responses: { 201: SuppressionRefListSchema },
      examples: {
        request: { emails: [SUPPRESSION_LIST_ITEM.email, 'former.employee@example.com'] },
        response: { data: [SUPPRESSION_REF, { object: 'suppression', id: ID.otherSuppression }] },
      },
    },
    async ({ input: { body }, auth, deps }) => {
      const entries = await deps.orm.em.transactional((em) =>
        addSuppressions(deps, em, { teamId: auth.teamId, emails: body.emails, origin: 'manual', source: 'api' }),
      );
      return { data: entries.map(presentSuppressionRef) };
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/suppressions/batch/remove',
      operationId: 'batchRemoveSuppressions',
      summary: 'Remove up to 1,000 entries by address or id; unknown ones are skipped',
      tags: ['Suppressions'],
      permission: 'full_access',
      body: BatchRemoveSuppressionsBodySchema,
      responses: { 200: DeletedSuppressionListSchema },
      examples: {
        request: { emails: [SUPPRESSION_LIST_ITEM.email] },
        response: { data: [{ ...SUPPRESSION_REF, deleted: true }] },
      },
    },
    async ({ input: { body }, auth, deps }) => ({
      data: (await removeSuppressions(deps, auth.teamId, body.emails ?? body.ids ?? [], 'api')).map(
        presentDeletedSuppression,
      ),
    }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/suppressions',
      operationId: 'listSuppressions',
      summary: 'List the suppression list, newest first',
      tags: ['Suppressions'],
      permission: 'full_access',
      query: ListSuppressionsQuerySchema,
      responses: { 200: listOf(SuppressionListItemSchema) },
      examples: { response: exampleList(SUPPRESSION_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listSuppressions(deps, auth.teamId, query), presentSuppressionListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/suppressions/:idOrEmail',
      operationId: 'getSuppression',
      summary: 'Retrieve a suppression by id or address',
      tags: ['Suppressions'],
      permission: 'full_access',
      params: IdOrEmailParamSchema,
      responses: { 200: SuppressionSchema },
      examples: { response: { object: 'suppression', ...SUPPRESSION_LIST_ITEM } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentSuppression(await getSuppression(deps, auth.teamId, params.idOrEmail)),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/suppressions/:idOrEmail',
      operationId: 'removeSuppression',
      summary: 'Remove a suppression by id or address',
      tags: ['Suppressions'],
      permission: 'full_access',
      params: IdOrEmailParamSchema,
      responses: { 200: DeletedSuppressionSchema },
      examples: { response: { ...SUPPRESSION_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => {
      const [removed] = await removeSuppressions(deps, auth.teamId, [params.idOrEmail], 'api');
      if (!removed) throw notFound('Suppression');
      return presentDeletedSuppression(removed);
    },
  ),
];
