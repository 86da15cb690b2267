import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { newId } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { type ITemplate, Team, Template, type TemplateVariable } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { getTemplate } from './find-templates.js';

export interface TemplateFields {
  name: string;
  html: string;
  alias: string | null;
  subject: string | null;
  text: string | null;
  variables: TemplateVariable[];
}

/** A new draft. */
export async function createTemplate(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  fields: TemplateFields,
): Promise<ITemplate> {
  const em = deps.orm.em;
  const now = deps.clock();
  const template = em.create(Template, {
    ...fields,
    team: em.getReference(Team, teamId),
    currentVersionId: newId(),
    published: null,
    publishedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  await flushOwningAlias(deps, fields.alias);
  return template;
}

/** Edits the draft; a published template keeps sending its published version until published again. */
export async function updateTemplate(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  idOrAlias: string,
  changes: Partial<TemplateFields>,
): Promise<ITemplate> {
  const template = await getTemplate(deps, teamId, idOrAlias);
  const given = Object.fromEntries(
    Object.entries(changes).filter(([, value]) => value !== undefined),
  ) as Partial<TemplateFields>;
  if (Object.keys(given).length === 0) return template;
  deps.orm.em.assign(template, { ...given, currentVersionId: newId(), updatedAt: deps.clock() });
  await flushOwningAlias(deps, given.alias ?? null);
  return template;
}

/** A copy as a new draft named "… (copy)"; the alias stays with the original. */
export async function duplicateTemplate(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  idOrAlias: string,
): Promise<ITemplate> {
  const source = await getTemplate(deps, teamId, idOrAlias);
  return createTemplate(deps, teamId, {
    name: `${source.name} (copy)`,
    html: source.html,
    alias: null,
    subject: source.subject ?? null,
    text: source.text ?? null,
    variables: source.variables,
  });
}

/** An alias names one template of the team: a taken one is the caller's input error. */
async function flushOwningAlias(deps: Pick<Deps, 'orm'>, alias: string | null): Promise<void> {
  try {
    await deps.orm.em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException)
      throw validationError(`alias: another template already uses ${JSON.stringify(alias)}`);
    throw err;
  }
}
