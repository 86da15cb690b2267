import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { ApiKey, type IApiKey } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** Immediate in this process; other API processes drop the key from their auth cache within its TTL. */
export async function revokeApiKey(
  deps: Pick<Deps, 'orm' | 'clock'> & Partial<Pick<Deps, 'authCache'>>,
  teamId: string,
  id: string,
): Promise<IApiKey> {
  const em = deps.orm.em;
  const apiKey = isUuid(id) ? await em.findOne(ApiKey, { id, team: teamId, revokedAt: null }) : null;
  if (!apiKey) throw notFound('API key');
  apiKey.revokedAt = deps.clock();
  await em.flush();
  deps.authCache?.evictKey(apiKey.id);
  return apiKey;
}
