import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { Domain, type IDomain } from '../../entities/index.js';

export function listDomains(deps: Pick<Deps, 'orm'>, teamId: string, page: PageQuery): Promise<Page<IDomain>> {
  return paginate(deps.orm.em, Domain, { team: teamId }, page);
}
