import { createApiKey } from '../../../services/api-keys/create-api-key.js';
import { listApiKeys } from '../../../services/api-keys/list-api-keys.js';
import { renameApiKey } from '../../../services/api-keys/rename-api-key.js';
import { revokeApiKey } from '../../../services/api-keys/revoke-api-key.js';
import { exampleList, ID } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { API_KEY_LIST_ITEM } from './api-keys.examples.js';
import { presentApiKey, presentCreatedApiKey, presentDeletedApiKey } from './api-key.presenter.js';
import {
  ApiKeyListItemSchema,
  CreateApiKeyBodySchema,
  CreatedApiKeySchema,
  DeletedApiKeySchema,
  UpdateApiKeyBodySchema,
  UpdatedApiKeySchema,
} from './api-keys.schemas.js';

export const apiKeyRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key',
      tags: ['API keys'],
      permission: 'full_access',
      body: CreateApiKeyBodySchema,
      responses: { 201: CreatedApiKeySchema },
      examples: {
        request: { name: 'Production (sending only)', permission: 'sending_access', domain_id: ID.domain },
        response: { id: ID.apiKey, token: 're_9Kp4dT7wLmQz2RbXy8vNcH3sJfA6gE1uVo5iWk0tYx2Qa' },
      },
    },
    async ({ input: { body }, auth, deps }) => {
      const { apiKey, token } = await createApiKey(deps, auth.teamId, {
        name: body.name,
        permission: body.permission,
        domainId: body.domain_id,
      });
      return presentCreatedApiKey(apiKey, token);
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api-keys',
      operationId: 'listApiKeys',
      summary: 'List API keys',
      tags: ['API keys'],
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(ApiKeyListItemSchema) },
      examples: { response: exampleList(API_KEY_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) => presentList(await listApiKeys(deps, auth.teamId, query), presentApiKey),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/api-keys/:id',
      operationId: 'updateApiKey',
      summary: 'Rename an API key',
      tags: ['API keys'],
      permission: 'full_access',
      params: IdParamSchema,
      body: UpdateApiKeyBodySchema,
      responses: { 200: UpdatedApiKeySchema },
      examples: { request: { name: 'Production (billing)' }, response: { object: 'api_key', id: ID.apiKey } },
    },
    async ({ input: { params, body }, auth, deps }) => {
      const apiKey = await renameApiKey(deps, auth.teamId, params.id, body.name);
      return { object: 'api_key' as const, id: apiKey.id };
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api-keys/:id',
      operationId: 'deleteApiKey',
      summary: 'Revoke an API key',
      tags: ['API keys'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedApiKeySchema },
      examples: { response: { object: 'api_key', id: ID.apiKey, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => presentDeletedApiKey(await revokeApiKey(deps, auth.teamId, params.id)),
  ),
];
