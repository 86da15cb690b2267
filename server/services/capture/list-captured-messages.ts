import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { CapturedMessage, type ICapturedMessage } from '../../entities/index.js';

export function listCapturedMessages(deps: Pick<Deps, 'orm'>, page: PageQuery): Promise<Page<ICapturedMessage>> {
  return paginate(deps.orm.em, CapturedMessage, {}, page, ['raw']);
}
