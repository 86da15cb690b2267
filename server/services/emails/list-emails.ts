import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';

export function listEmails(deps: Pick<Deps, 'orm'>, teamId: string, page: PageQuery): Promise<Page<IEmail>> {
  return paginate(deps.orm.em, Email, { team: teamId }, page, ['html', 'text']);
}
