import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { ApiLog, type IApiLog } from '../../entities/index.js';
import { notFound } from '../../errors.js';

export function listApiLogs(deps: Pick<Deps, 'orm'>, teamId: string, page: PageQuery): Promise<Page<IApiLog>> {
  return paginate(deps.orm.em, ApiLog, { team: teamId }, page, ['requestBody', 'responseBody']);
}

export async function getApiLog(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IApiLog> {
  const log = await deps.orm.em.findOne(ApiLog, { id, team: teamId });
  if (!log) throw notFound('Log');
  return log;
}
