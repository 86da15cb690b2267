import type { Deps } from '../../deps.js';
import type { ITemplate } from '../../entities/index.js';
import { getTemplate } from './find-templates.js';

/** Freezes the draft as the version sends use. */
export async function publishTemplate(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  idOrAlias: string,
): Promise<ITemplate> {
  const template = await getTemplate(deps, teamId, idOrAlias);
  template.published = {
    subject: template.subject ?? null,
    html: template.html,
    text: template.text ?? null,
    variables: template.variables,
  };
  template.publishedAt = deps.clock();
  await deps.orm.em.flush();
  return template;
}
