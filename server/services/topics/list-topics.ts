import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { type ITopic, Topic } from '../../entities/index.js';

export function listTopics(deps: Pick<Deps, 'orm'>, teamId: string, page: PageQuery): Promise<Page<ITopic>> {
  return paginate(deps.orm.em, Topic, { team: teamId }, page);
}
