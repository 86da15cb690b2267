import { getApiLog, listApiLogs } from '../../../services/api-logs/find-api-logs.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { LOG, LOG_LIST_ITEM } from './logs.examples.js';
import { presentLog, presentLogListItem } from './log.presenter.js';
import { LogListItemSchema, LogSchema } from './logs.schemas.js';

export const logRoutes = [
  defineRoute(
    {
      method: 'get',
      path: '/logs',
      operationId: 'listLogs',
      summary: "List the team's API requests, newest first",
      tags: ['Logs'],
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(LogListItemSchema) },
      examples: { response: exampleList(LOG_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listApiLogs(deps, auth.teamId, query), presentLogListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/logs/:id',
      operationId: 'getLog',
      summary: 'Retrieve one API request with its (redacted) bodies',
      tags: ['Logs'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: LogSchema },
      examples: { response: LOG },
    },
    async ({ input: { params }, auth, deps }) => presentLog(await getApiLog(deps, auth.teamId, params.id)),
  ),
];
