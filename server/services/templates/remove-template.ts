import type { Deps } from '../../deps.js';
import type { ITemplate } from '../../entities/index.js';
import { getTemplate } from './find-templates.js';

/** Emails already accepted keep their rendered copy; later sends naming it are refused. */
export async function removeTemplate(deps: Pick<Deps, 'orm'>, teamId: string, idOrAlias: string): Promise<ITemplate> {
  const template = await getTemplate(deps, teamId, idOrAlias);
  await deps.orm.em.remove(template).flush();
  return template;
}
