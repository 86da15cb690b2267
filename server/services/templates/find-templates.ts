import type { FilterQuery } from '@mikro-orm/core';
import { isUuid } from '../../db/ids.js';
import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { type ITemplate, Template } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** Ids and aliases as one filter within the team (aliases never look like UUIDs, so each names one template). */
export function templateFilter(teamId: string, idsOrAliases: string[]): FilterQuery<ITemplate> {
  return {
    team: teamId,
    $or: [{ id: { $in: idsOrAliases.filter(isUuid) } }, { alias: { $in: idsOrAliases.filter((x) => !isUuid(x)) } }],
  };
}

/** Another team's template reads exactly like a missing one. */
export async function getTemplate(deps: Pick<Deps, 'orm'>, teamId: string, idOrAlias: string): Promise<ITemplate> {
  const template = await deps.orm.em.findOne(Template, templateFilter(teamId, [idOrAlias]));
  if (!template) throw notFound('Template');
  return template;
}

export function listTemplates(deps: Pick<Deps, 'orm'>, teamId: string, query: PageQuery): Promise<Page<ITemplate>> {
  // Bodies are never listed: not loaded at all.
  return paginate(deps.orm.em, Template, { team: teamId }, query, [
    'html',
    'text',
    'subject',
    'variables',
    'published',
  ]);
}
