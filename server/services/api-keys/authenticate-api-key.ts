import { preparedQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { ApiKeyPermission } from '../../entities/index.js';
import { invalidApiKey } from '../../errors.js';
import type { Auth } from './auth.js';
import { hashToken } from './token.js';

const LAST_USED_RESOLUTION_MS = 60_000;

interface AuthRow {
  id: string;
  team_id: string;
  permission: ApiKeyPermission;
  domain_id: string | null;
  last_used_at: Date | string | null;
}

/**
 * Looks the key up by its hash through the unique index, or in the short-lived cache;
 * `last_used_at` is written at most once a minute.
 */
export async function authenticateApiKey(
  deps: Pick<Deps, 'orm' | 'clock' | 'logger' | 'authCache'>,
  token: string,
): Promise<Auth> {
  const hash = hashToken(token);
  const cacheKey = hash.toString('base64');
  const now = deps.clock();
  const cached = deps.authCache.get(cacheKey, now.getTime());
  if (cached) return cached;
  return deps.authCache.shared(cacheKey, async () => {
    // Plain SQL: entity hydration would cost more than the query.
    const [row] = await preparedQuery<AuthRow>(
      deps.orm,
      'postlane_authenticate_api_key',
      'SELECT id, team_id, permission, domain_id, last_used_at FROM api_key WHERE token_hash = ? AND revoked_at IS NULL',
      [hash],
    );
    if (!row) throw invalidApiKey();
    if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > LAST_USED_RESOLUTION_MS) {
      // The condition makes concurrent first uses write once; not awaited, the request need not wait.
      deps.orm.em
        .getConnection()
        .execute('UPDATE api_key SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', [
          now,
          row.id,
          new Date(now.getTime() - LAST_USED_RESOLUTION_MS),
        ])
        .catch((err: Error) => deps.logger.warn({ err: err.message, keyId: row.id }, 'could not record key use'));
    }
    const auth: Auth = { keyId: row.id, teamId: row.team_id, permission: row.permission, domainId: row.domain_id };
    deps.authCache.set(cacheKey, auth, now.getTime());
    return auth;
  });
}
