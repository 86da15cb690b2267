import type * as v from 'valibot';
import { CREATED_AT, ID, LATER_AT } from '../../examples.js';
import type { ApiKeyListItemSchema } from './api-keys.schemas.js';

export const API_KEY_LIST_ITEM: v.InferInput<typeof ApiKeyListItemSchema> = {
  id: ID.apiKey,
  name: 'Production (sending only)',
  permission: 'sending_access',
  domain_id: ID.domain,
  token_hint: 're_9Kp…x2Qa',
  created_at: CREATED_AT,
  last_used_at: LATER_AT,
};
