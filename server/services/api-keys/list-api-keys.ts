import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { ApiKey, type IApiKey } from '../../entities/index.js';

export function listApiKeys(deps: Pick<Deps, 'orm'>, teamId: string, page: PageQuery): Promise<Page<IApiKey>> {
  return paginate(deps.orm.em, ApiKey, { team: teamId, revokedAt: null }, page);
}
