import * as v from 'valibot';
import { IdParamSchema, listOf, paginatedQuery, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;

/** A multipart field holding JSON (the SDK JSON-encodes column_map, segments and topics). */
const json = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      try {
        return JSON.parse(dataset.value) as unknown;
      } catch {
        addIssue({ message: 'must be JSON' });
        return NEVER;
      }
    }),
    schema,
  );

const ColumnSchema = v.pipe(v.string(), v.minLength(1, 'must name a column'), v.maxLength(1000, 'is too long'));

export const ColumnMapSchema = v.strictObject({
  email: v.optional(ColumnSchema),
  first_name: v.optional(ColumnSchema),
  last_name: v.optional(ColumnSchema),
  unsubscribed: v.optional(ColumnSchema),
  properties: v.optional(
    v.pipe(
      v.record(
        v.string(),
        v.strictObject({
          column: ColumnSchema,
          type: v.optional(v.picklist(['string', 'number', 'boolean'])),
        }),
      ),
      v.check((p) => Object.keys(p).length <= 100, 'may map at most 100 properties'),
    ),
  ),
});

/** The multipart fields besides `file`, each a string as sent (JSON where the SDK encodes it). */
export const CreateContactImportFieldsSchema = v.strictObject({
  column_map: v.optional(json(ColumnMapSchema)),
  on_conflict: v.optional(v.picklist(['upsert', 'skip'], 'must be upsert or skip'), 'skip'),
  segments: v.optional(
    json(v.pipe(v.array(v.strictObject({ id: UuidSchema })), v.maxLength(100, 'may name at most 100 segments'))),
    '[]',
  ),
  topics: v.optional(
    json(
      v.pipe(
        v.array(v.strictObject({ id: UuidSchema, subscription: v.picklist(['opt_in', 'opt_out']) })),
        v.maxLength(100, 'may name at most 100 topics'),
      ),
    ),
    '[]',
  ),
});

/** What the OpenAPI document shows for the multipart body. */
export const CreateContactImportBodySchema = v.pipe(
  v.object({
    file: v.pipe(
      v.string(),
      v.metadata({ description: 'The CSV file (UTF-8; `,`, `;` or tab separated; a header line).' }),
    ),
    column_map: v.optional(
      v.pipe(
        v.string(),
        v.metadata({
          description:
            'JSON: contact fields and property keys to column names, e.g. {"email":"Email","first_name":"First Name","properties":{"plan":{"column":"Plan","type":"string"}}}. Without it the columns email, first_name, last_name and unsubscribed are recognised by name.',
        }),
      ),
    ),
    on_conflict: v.optional(v.picklist(['upsert', 'skip'])),
    segments: v.optional(v.pipe(v.string(), v.metadata({ description: 'JSON: [{"id": "<segment id>"}]' }))),
    topics: v.optional(
      v.pipe(v.string(), v.metadata({ description: 'JSON: [{"id": "<topic id>", "subscription": "opt_in"}]' })),
    ),
  }),
  v.metadata({ title: 'CreateContactImportBody' }),
);

export const ContactImportRefSchema = v.object({ object: v.literal('contact_import'), id: v.string() });

export const ContactImportSchema = v.pipe(
  v.object({
    object: v.literal('contact_import'),
    id: v.string(),
    status: v.picklist(STATUSES),
    created_at: TimestampSchema,
    completed_at: v.nullable(TimestampSchema),
    counts: v.object({
      total: v.number(),
      created: v.number(),
      updated: v.number(),
      skipped: v.number(),
      failed: v.number(),
    }),
    /** Postlane's additions. */
    file_name: v.nullable(v.string()),
    file_size: v.number(),
    progress: v.pipe(v.number(), v.metadata({ description: 'Share of the file read, 0 to 1.' })),
    failure: v.nullable(v.pipe(v.string(), v.metadata({ description: 'Why a failed import stopped.' }))),
  }),
  v.metadata({ title: 'ContactImport' }),
);

export const ContactImportListSchema = listOf(ContactImportSchema);

export const ListContactImportsQuerySchema = paginatedQuery({
  status: v.optional(v.picklist(STATUSES, `must be one of ${STATUSES.join(', ')}`)),
});

export const ContactImportParamSchema = IdParamSchema;
