import type * as v from 'valibot';
import { CREATED_AT, ID, LATER_AT } from '../../examples.js';
import type { CreateTemplateBodySchema, TemplateListItemSchema, TemplateSchema } from './templates.schemas.js';

const CONTENT = {
  subject: 'Your order #{{{order_number}}} has shipped',
  html: '<p>Hi {{{first_name}}}, your order <strong>#{{{order_number}}}</strong> is on its way.</p>',
  text: 'Hi {{{first_name}}}, your order #{{{order_number}}} is on its way.',
};

/** The template the batch send example uses by its alias. */
export const CREATE_TEMPLATE_REQUEST: v.InferInput<typeof CreateTemplateBodySchema> = {
  name: 'Order shipped',
  alias: 'order-shipped',
  ...CONTENT,
  variables: [
    { key: 'first_name', type: 'string', fallback_value: 'there' },
    { key: 'order_number', type: 'number' },
  ],
};

export const TEMPLATE_LIST_ITEM: v.InferInput<typeof TemplateListItemSchema> = {
  id: ID.template,
  name: 'Order shipped',
  alias: 'order-shipped',
  status: 'published',
  published_at: LATER_AT,
  created_at: CREATED_AT,
  updated_at: LATER_AT,
};

export const TEMPLATE: v.InferInput<typeof TemplateSchema> = {
  object: 'template',
  ...TEMPLATE_LIST_ITEM,
  current_version_id: ID.templateVersion,
  ...CONTENT,
  from: null,
  reply_to: null,
  variables: [
    { key: 'first_name', type: 'string', fallback_value: 'there', created_at: LATER_AT, updated_at: LATER_AT },
    { key: 'order_number', type: 'number', fallback_value: null, created_at: LATER_AT, updated_at: LATER_AT },
  ],
  has_unpublished_versions: false,
};

export const TEMPLATE_REF = { object: 'template', id: ID.template } as const;
