import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { ApiKey, type IApiKey } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** A key's new name; its token, permission and domain stay. A revoked key is gone (404). */
export async function renameApiKey(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
  name: string,
): Promise<IApiKey> {
  const em = deps.orm.em;
  const apiKey = isUuid(id) ? await em.findOne(ApiKey, { id, team: teamId, revokedAt: null }) : null;
  if (!apiKey) throw notFound('API key');
  apiKey.name = name;
  await em.flush();
  return apiKey;
}
