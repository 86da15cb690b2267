import type { IApiKey } from '../../../entities/index.js';

export const presentCreatedApiKey = (apiKey: IApiKey, token: string) => ({ id: apiKey.id, token });

export function presentApiKey(apiKey: IApiKey) {
  return {
    id: apiKey.id,
    name: apiKey.name,
    permission: apiKey.permission,
    domain_id: apiKey.domainId ?? null,
    token_hint: apiKey.tokenHint,
    created_at: apiKey.createdAt.toISOString(),
    last_used_at: apiKey.lastUsedAt?.toISOString() ?? null,
  };
}

export const presentDeletedApiKey = (apiKey: IApiKey) => ({
  object: 'api_key' as const,
  id: apiKey.id,
  deleted: true as const,
});
