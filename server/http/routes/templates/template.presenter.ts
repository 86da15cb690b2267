import type { ITemplate, TemplateVersion } from '../../../entities/index.js';

// Field by field: jsonb does not keep key order, so the stored copy cannot be compared as a string.
const variablesKey = (version: TemplateVersion) =>
  JSON.stringify(version.variables.map((v) => [v.key, v.type, v.fallbackValue]));
const sameVersion = (a: TemplateVersion, b: TemplateVersion) =>
  a.subject === b.subject && a.html === b.html && a.text === b.text && variablesKey(a) === variablesKey(b);

export const presentTemplateRef = (template: ITemplate) => ({ object: 'template' as const, id: template.id });

export const presentDeletedTemplate = (template: ITemplate) => ({
  object: 'template' as const,
  id: template.id,
  deleted: true as const,
});

export function presentTemplateListItem(template: ITemplate) {
  return {
    id: template.id,
    name: template.name,
    alias: template.alias ?? null,
    status: template.publishedAt ? ('published' as const) : ('draft' as const),
    published_at: template.publishedAt?.toISOString() ?? null,
    created_at: template.createdAt.toISOString(),
    updated_at: template.updatedAt.toISOString(),
  };
}

/** The draft as last edited; `has_unpublished_versions` says whether sends still use an older one. */
export function presentTemplate(template: ITemplate) {
  const { published } = template;
  const draft = {
    subject: template.subject ?? null,
    html: template.html,
    text: template.text ?? null,
    variables: template.variables,
  };
  const updatedAt = template.updatedAt.toISOString();
  return {
    object: 'template' as const,
    ...presentTemplateListItem(template),
    current_version_id: template.currentVersionId,
    subject: draft.subject,
    html: draft.html,
    text: draft.text,
    from: null,
    reply_to: null,
    variables: template.variables.map((variable) => ({
      key: variable.key,
      type: variable.type,
      fallback_value: variable.fallbackValue,
      created_at: updatedAt,
      updated_at: updatedAt,
    })),
    has_unpublished_versions: Boolean(published) && !sameVersion(published!, draft),
  };
}
