import type { Deps } from '../../deps.js';
import { ApiKey, type ApiKeyPermission } from '../../entities/index.js';
import { invalidApiKey } from '../../errors.js';
import { hashToken } from './token.js';

export interface Auth {
  keyId: string;
  teamId: string;
  permission: ApiKeyPermission;
  domainId: string | null;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** Looks the key up by its hash through the unique index; `last_used_at` is written at most once a minute. */
export async function authenticateApiKey(deps: Pick<Deps, 'orm' | 'clock' | 'logger'>, token: string): Promise<Auth> {
  const em = deps.orm.em;
  const apiKey = await em.findOne(ApiKey, { tokenHash: hashToken(token), revokedAt: null }, { fields: ['id', 'team', 'permission', 'domainId', 'lastUsedAt'] });
  if (!apiKey) throw invalidApiKey();
  const now = deps.clock();
  if (!apiKey.lastUsedAt || now.getTime() - apiKey.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    em.fork()
      .nativeUpdate(ApiKey, { id: apiKey.id }, { lastUsedAt: now })
      .catch((err: Error) => deps.logger.warn({ err: err.message, keyId: apiKey.id }, 'could not record key use'));
  }
  return { keyId: apiKey.id, teamId: apiKey.team.id, permission: apiKey.permission, domainId: apiKey.domainId ?? null };
}
