import * as v from 'valibot';
import { API_KEY_PERMISSIONS } from '../../../entities/api-key.entity.js';
import { LineSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const ApiKeyNameSchema = v.pipe(
  LineSchema,
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(50, 'must be at most 50 characters'),
);

export const CreateApiKeyBodySchema = v.pipe(
  v.strictObject({
    name: ApiKeyNameSchema,
    permission: v.optional(v.picklist(API_KEY_PERMISSIONS, 'must be full_access or sending_access'), 'full_access'),
    domain_id: v.optional(v.nullable(UuidSchema)),
  }),
  v.metadata({ title: 'CreateApiKeyRequest' }),
);

export const CreatedApiKeySchema = v.pipe(
  v.object({ id: UuidSchema, token: v.string() }),
  v.metadata({ title: 'CreatedApiKey', description: 'The token is shown once and cannot be retrieved later.' }),
);

export const ApiKeyListItemSchema = v.pipe(
  v.object({
    id: UuidSchema,
    name: v.string(),
    permission: v.picklist(API_KEY_PERMISSIONS),
    domain_id: v.nullable(UuidSchema),
    token_hint: v.string(),
    created_at: TimestampSchema,
    last_used_at: v.nullable(TimestampSchema),
  }),
  v.metadata({ title: 'ApiKey' }),
);

export const DeletedApiKeySchema = v.object({ object: v.literal('api_key'), id: UuidSchema, deleted: v.literal(true) });

export const UpdateApiKeyBodySchema = v.pipe(
  v.strictObject({ name: ApiKeyNameSchema }),
  v.metadata({ title: 'UpdateApiKeyRequest' }),
);

export const UpdatedApiKeySchema = v.pipe(
  v.object({ object: v.literal('api_key'), id: UuidSchema }),
  v.metadata({ title: 'UpdateApiKeyResponse' }),
);
