import type { Deps } from '../../deps.js';
import { Template, type TemplateVersion } from '../../entities/index.js';
import { ApiError, missingRequiredField, validationError } from '../../errors.js';
import type { AdmittedEmail, SendEmailInput } from '../emails/send-input.js';
import { templateFilter } from './find-templates.js';
import { renderTemplate } from './render-template.js';

/** Each template the sends name, by the id or alias they used: its published version, or null while it is only a draft. */
export type SendTemplates = Map<string, TemplateVersion | null>;

/** One query for a whole batch. */
export async function findSendTemplates(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  inputs: SendEmailInput[],
): Promise<SendTemplates> {
  const refs = [...new Set(inputs.flatMap((input) => (input.template ? [input.template.id] : [])))];
  if (refs.length === 0) return new Map();
  const rows = await deps.orm.em.find(Template, templateFilter(teamId, refs), { fields: ['id', 'alias', 'published'] });
  const found: SendTemplates = new Map();
  for (const row of rows) {
    found.set(row.id, row.published ?? null);
    if (row.alias) found.set(row.alias, row.published ?? null);
  }
  return found;
}

/**
 * A send with a template takes the published version's html and text, rendered with the send's
 * values, and its subject when the request gives none (as Resend: the request's own wins). Nor
 * can the request carry a body of its own.
 */
export function applyTemplate(input: SendEmailInput, templates: SendTemplates): AdmittedEmail | ApiError {
  if (!input.template) return withSubject(input, input.subject);
  const { id, variables } = input.template;
  const version = templates.get(id);
  if (version === undefined) return validationError(`template.id: no template with id ${JSON.stringify(id)}`);
  if (version === null)
    return validationError(`template.id: template ${JSON.stringify(id)} is a draft; publish it before sending with it`);
  if (input.html !== null || input.text !== null)
    return validationError('html, text: cannot be sent with a template, which gives the body');
  const rendered = renderTemplate(version, { variables });
  if (rendered instanceof ApiError) return rendered;
  return withSubject({ ...input, html: rendered.html, text: rendered.text }, input.subject ?? rendered.subject);
}

const withSubject = (input: SendEmailInput, subject: string | null): AdmittedEmail | ApiError =>
  subject === null ? missingRequiredField('subject') : { ...input, subject };
