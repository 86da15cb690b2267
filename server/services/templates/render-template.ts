import { type ApiError, validationError } from '../../errors.js';
import type { TemplateVersion } from '../../entities/index.js';

export type TemplateValue = string | number;

export interface RenderSources {
  /** The send's own values (`template.variables`); they win over everything else. */
  variables: Record<string, TemplateValue>;
  /** A contact's fields and properties, when a broadcast renders per contact (FIRST_NAME, EMAIL, custom keys). */
  contact?: Record<string, TemplateValue | null>;
}

export interface RenderedTemplate {
  subject: string | null;
  html: string;
  text: string | null;
}

/**
 * `{{{NAME}}}` or `{{{NAME|inline fallback}}}`, spaces allowed around the name. The name is a
 * variable key: letters, digits and underscores, not starting with a digit.
 */
const PLACEHOLDER = /\{\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|([^}]*))?\}\}\}/g;

/** Resolved later by the send path, per recipient: rendering leaves them exactly as written. */
export const LINK_PLACEHOLDERS: ReadonlySet<string> = new Set(['UNSUBSCRIBE_URL', 'ALT_UNSUBSCRIBE_URL']);

/** Own keys only: a placeholder named `constructor` must not find Object's. */
const own = (record: Record<string, TemplateValue | null> | undefined, key: string) =>
  record && Object.hasOwn(record, key) ? record[key]! : null;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/**
 * Fills a template's placeholders. Each takes, in order: the send's value, the contact's, the
 * fallback written inline (`{{{NAME|there}}}`), the fallback the template declares. A value the
 * template declares a type for must have that type. In html every value and declared fallback is
 * HTML-escaped (the template's markup is kept, a value never adds any); subject and text take
 * them verbatim, but a value in the subject must be one line. A placeholder left with no
 * value refuses the whole render, naming every such variable.
 */
export function renderTemplate(template: TemplateVersion, sources: RenderSources): RenderedTemplate | ApiError {
  const declared = new Map(template.variables.map((variable) => [variable.key, variable]));
  for (const [key, value] of Object.entries(sources.variables)) {
    const type = declared.get(key)?.type;
    if (type && typeof value !== type)
      return validationError(`template.variables.${key}: must be a ${type}, as the template declares`);
  }

  const missing = new Set<string>();
  const multiline = new Set<string>();
  const fill = (body: string, field: 'subject' | 'html' | 'text'): string =>
    body.replace(PLACEHOLDER, (placeholder, key: string, inline: string | undefined) => {
      if (LINK_PLACEHOLDERS.has(key)) return placeholder;
      // An inline fallback is written in the body itself, so it is already html where it stands.
      const given = own(sources.variables, key) ?? own(sources.contact, key);
      if (given === null && inline !== undefined) return inline;
      const value = given ?? declared.get(key)?.fallbackValue ?? null;
      if (value === null) {
        missing.add(key);
        return placeholder;
      }
      const asText = String(value);
      if (field === 'html') return escapeHtml(asText);
      if (field === 'subject' && /[\u0000-\u001f\u007f]/.test(asText)) multiline.add(key);
      return asText;
    });

  const rendered = {
    subject: template.subject === null ? null : fill(template.subject, 'subject'),
    html: fill(template.html, 'html'),
    text: template.text === null ? null : fill(template.text, 'text'),
  };
  const [notOneLine] = multiline;
  if (notOneLine) return validationError(`template.variables.${notOneLine}: must be one line, as it fills the subject`);
  if (missing.size > 0) {
    const names = [...missing].sort().map((name) => `\`${name}\``);
    return validationError(`template.variables: no value and no fallback for ${names.join(', ')}`);
  }
  return rendered;
}
