import * as v from 'valibot';
import { TEMPLATE_VARIABLE_TYPES } from '../../../entities/template.entity.js';
import { isUuid } from '../../../db/ids.js';
import { LineSchema, TextSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

export const MAX_TEMPLATE_VARIABLES = 50;

/** Names the send path fills itself (contact fields, links) or Resend keeps for its own syntax. */
export const RESERVED_VARIABLE_KEYS = [
  'FIRST_NAME',
  'LAST_NAME',
  'EMAIL',
  'UNSUBSCRIBE_URL',
  'ALT_UNSUBSCRIBE_URL',
  'contact',
  'this',
];

/** URL-safe characters only, so the SDK's unencoded paths and encodeURIComponent-ed ones read the same. */
const AliasSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9._~-]{1,128}$/, 'must be 1 to 128 letters, digits, `.`, `_`, `~` or `-`'),
  v.check((alias) => !isUuid(alias), 'must not look like a UUID (ids and aliases share the path)'),
);

const VariableSchema = v.pipe(
  v.strictObject({
    key: v.pipe(
      v.string(),
      v.regex(
        /^[A-Za-z_][A-Za-z0-9_]{0,49}$/,
        'must be 1 to 50 letters, digits and underscores, not starting with a digit',
      ),
      v.check((key) => !RESERVED_VARIABLE_KEYS.includes(key), `is reserved (${RESERVED_VARIABLE_KEYS.join(', ')})`),
    ),
    type: v.picklist(TEMPLATE_VARIABLE_TYPES, 'must be string or number'),
    fallback_value: v.optional(
      v.nullable(v.union([TextSchema, v.pipe(v.number(), v.finite())], 'must be a string or a number')),
      null,
    ),
  }),
  v.check(
    (variable) => variable.fallback_value === null || typeof variable.fallback_value === variable.type,
    "fallback_value: must have the variable's type",
  ),
);

/**
 * Declarations only. Values cannot be stored on a template (spec): a map of values is refused with
 * a message saying where values go, rather than read as something else.
 */
const VariablesSchema = v.nullable(
  v.pipe(
    v.array(
      VariableSchema,
      'cannot store values on a template: declare an array of {key, type, fallback_value}, and give values in `template.variables` when sending',
    ),
    v.maxLength(MAX_TEMPLATE_VARIABLES, `must declare at most ${MAX_TEMPLATE_VARIABLES} variables`),
    v.check(
      (list) => new Set(list.map((variable) => variable.key)).size === list.length,
      'must not declare a key twice',
    ),
  ),
);

/** Refused, never dropped: the spec says a template cannot store them. */
const notStored = (field: string) =>
  v.optional(
    v.custom<null>((value) => value === null, `cannot be stored on a template: give \`${field}\` in each send`),
  );

const NameSchema = v.pipe(
  LineSchema,
  v.minLength(1, 'must not be empty'),
  v.maxLength(256, 'must be at most 256 characters'),
);
const HtmlSchema = v.pipe(TextSchema, v.minLength(1, 'must not be empty'));
const SubjectSchema = v.pipe(LineSchema, v.maxLength(998, 'must be at most 998 characters'));

const editableEntries = {
  alias: v.optional(v.nullable(AliasSchema)),
  subject: v.optional(v.nullable(SubjectSchema)),
  text: v.optional(v.nullable(TextSchema)),
  variables: v.optional(VariablesSchema),
  from: notStored('from'),
  reply_to: notStored('reply_to'),
};

export const CreateTemplateBodySchema = v.pipe(
  v.strictObject({ name: NameSchema, html: HtmlSchema, ...editableEntries }),
  v.metadata({ title: 'CreateTemplateRequest' }),
);

export const UpdateTemplateBodySchema = v.pipe(
  v.strictObject({ name: v.optional(NameSchema), html: v.optional(HtmlSchema), ...editableEntries }),
  v.metadata({ title: 'UpdateTemplateRequest' }),
);

export type TemplateBodyOutput = v.InferOutput<typeof UpdateTemplateBodySchema>;

/** An id or an alias (the router has already decoded it). */
export const IdOrAliasParamSchema = v.object({
  idOrAlias: v.pipe(
    TextSchema,
    v.minLength(1),
    v.maxLength(256, 'must be a template id or alias (at most 256 characters)'),
  ),
});

export const TemplateRefSchema = v.object({ object: v.literal('template'), id: UuidSchema });

export const DeletedTemplateSchema = v.object({
  object: v.literal('template'),
  id: UuidSchema,
  deleted: v.literal(true),
});

const StatusSchema = v.picklist(['draft', 'published']);

export const TemplateListItemSchema = v.pipe(
  v.object({
    id: UuidSchema,
    name: v.string(),
    alias: v.nullable(v.string()),
    status: StatusSchema,
    published_at: v.nullable(TimestampSchema),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  }),
  v.metadata({ title: 'TemplateListItem' }),
);

export const TemplateSchema = v.pipe(
  v.object({
    object: v.literal('template'),
    ...TemplateListItemSchema.pipe[0].entries,
    current_version_id: UuidSchema,
    subject: v.nullable(v.string()),
    html: v.string(),
    text: v.nullable(v.string()),
    /** Always null: a template cannot store them (each send gives its own). */
    from: v.null(),
    reply_to: v.null(),
    variables: v.array(
      v.object({
        key: v.string(),
        type: v.picklist(TEMPLATE_VARIABLE_TYPES),
        fallback_value: v.nullable(v.union([v.string(), v.number()])),
        created_at: TimestampSchema,
        updated_at: TimestampSchema,
      }),
    ),
    has_unpublished_versions: v.boolean(),
  }),
  v.metadata({ title: 'Template', description: 'The draft, as last edited; sends use the version last published.' }),
);
