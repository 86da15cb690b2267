import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { type ISegment, Segment } from '../../entities/index.js';

export function listSegments(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  page: PageQuery,
  only?: readonly string[],
): Promise<Page<ISegment>> {
  return paginate(deps.orm.em, Segment, only ? { team: teamId, id: { $in: [...only] } } : { team: teamId }, page);
}
