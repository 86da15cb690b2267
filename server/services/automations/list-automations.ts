import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { Automation, type AutomationStatus, type IAutomation } from '../../entities/index.js';

export function listAutomations(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  page: PageQuery,
  status?: AutomationStatus,
): Promise<Page<IAutomation>> {
  return paginate(deps.orm.em, Automation, status ? { team: teamId, status } : { team: teamId }, page);
}
