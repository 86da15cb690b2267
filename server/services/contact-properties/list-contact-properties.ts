import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { ContactProperty, type IContactProperty } from '../../entities/index.js';

export function listContactProperties(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  page: PageQuery,
): Promise<Page<IContactProperty>> {
  return paginate(deps.orm.em, ContactProperty, { team: teamId }, page);
}
