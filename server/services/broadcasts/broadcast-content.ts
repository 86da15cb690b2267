import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { ContactPropertyValue, IBroadcast, TemplateVersion } from '../../entities/index.js';
import { ApiError, missingRequiredField } from '../../errors.js';
import { escapeHtml, renderTemplate, type TemplateValue } from '../templates/render-template.js';

/** A contact as a broadcast reads it: its fields and property values. */
export interface BroadcastContact {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  properties: Record<string, ContactPropertyValue>;
}

/**
 * The broadcast's body as a template whose variables are the contact's fields and the team's
 * properties: a contact without a value gets the inline fallback (`{{{FIRST_NAME|there}}}`), else
 * the property's declared fallback, else nothing. Any other placeholder is refused at send.
 * `{{{ALT_UNSUBSCRIBE_URL}}}` is the alias the send path resolves as `{{{UNSUBSCRIBE_URL}}}`.
 */
export interface BroadcastRenderer {
  render(contact: BroadcastContact): { subject: string; html: string | null; text: string | null } | ApiError;
}

const ALT_UNSUBSCRIBE = /\{\{\{\s*ALT_UNSUBSCRIBE_URL\s*\}\}\}/g;
const UNSUBSCRIBE = /\{\{\{\s*UNSUBSCRIBE_URL\s*\}\}\}/g;
const asLink = (body: string | null) =>
  body?.replace(ALT_UNSUBSCRIBE, '{{{UNSUBSCRIBE_URL}}}').replace(UNSUBSCRIBE, '{{{UNSUBSCRIBE_URL}}}') ?? null;

/** The preview text as the hidden preheader mail clients show beside the subject. */
const withPreheader = (html: string | null, previewText: string | null) =>
  html !== null && previewText
    ? `<div style="display:none;max-height:0;overflow:hidden">${escapeHtml(previewText)}</div>${html}`
    : html;

export async function broadcastRenderer(deps: Pick<Deps, 'orm'>, broadcast: IBroadcast): Promise<BroadcastRenderer> {
  const properties = await sqlQuery<{
    key: string;
    type: 'string' | 'number';
    fallback_value: ContactPropertyValue | null;
  }>(deps.orm.em, 'SELECT key, type, fallback_value FROM contact_property WHERE team_id = ?', [broadcast.team.id]);
  const version: TemplateVersion = {
    subject: broadcast.subject,
    html: withPreheader(asLink(broadcast.html ?? null), broadcast.previewText ?? null) ?? '',
    text: asLink(broadcast.text ?? null),
    variables: [
      ...['FIRST_NAME', 'LAST_NAME', 'EMAIL'].map((key) => ({ key, type: 'string' as const, fallbackValue: '' })),
      ...properties.map((p) => ({ key: p.key, type: p.type, fallbackValue: p.fallback_value ?? '' })),
    ],
  };
  const hasHtml = broadcast.html !== null && broadcast.html !== undefined;
  return {
    render(contact) {
      const values: Record<string, TemplateValue | null> = {
        ...contact.properties,
        FIRST_NAME: contact.first_name,
        LAST_NAME: contact.last_name,
        EMAIL: contact.email,
      };
      const rendered = renderTemplate(version, { variables: {}, contact: values });
      if (rendered instanceof ApiError) return rendered;
      return { subject: rendered.subject!, html: hasHtml ? rendered.html : null, text: rendered.text };
    },
  };
}

/** What a send needs beyond a draft: a body, and placeholders that every contact can fill. */
export async function assertSendable(deps: Pick<Deps, 'orm'>, broadcast: IBroadcast): Promise<void> {
  if (!broadcast.html && !broadcast.text) throw missingRequiredField('html');
  const renderer = await broadcastRenderer(deps, broadcast);
  const sample = renderer.render({
    id: '',
    email: 'contact@example.com',
    first_name: null,
    last_name: null,
    unsubscribed: false,
    properties: {},
  });
  if (sample instanceof ApiError)
    throw new ApiError(422, 'validation_error', sample.message.replace('template.variables', 'placeholders'));
}
