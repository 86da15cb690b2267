import { PassThrough } from 'node:stream';
import formidable from 'formidable';
import * as v from 'valibot';
import { ApiError, validationError } from '../../../errors.js';
import {
  type ContactImportOptions,
  createContactImport,
} from '../../../services/contact-imports/create-contact-import.js';
import {
  contactImportErrorsCsv,
  getContactImport,
  listContactImports,
} from '../../../services/contact-imports/get-contact-imports.js';
import { issueToApiError } from '../../middleware/validate.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import type { AppContext } from '../../context.js';
import { defineRoute } from '../../route.js';
import { presentContactImport, presentContactImportRef } from './contact-import.presenter.js';
import { CONTACT_IMPORT, CONTACT_IMPORT_ERRORS, CONTACT_IMPORT_REF } from './contact-imports.examples.js';
import {
  ContactImportListSchema,
  ContactImportParamSchema,
  ContactImportRefSchema,
  ContactImportSchema,
  CreateContactImportBodySchema,
  CreateContactImportFieldsSchema,
  ListContactImportsQuerySchema,
} from './contact-imports.schemas.js';

const TAGS = ['Contacts'];

/** A multipart parser's refusal in the API's words (formidable's 413 for a file over the limit). */
function multipartError(err: unknown, maxMb: number): ApiError {
  if (err instanceof ApiError) return err;
  const { httpCode, message } = err as { httpCode?: number; message?: string };
  if (httpCode === 413) return validationError(`file: larger than ${maxMb} MB (POSTLANE_IMPORT_MAX_MB)`, 413);
  return validationError(`Invalid multipart body: ${String(message ?? err).slice(0, 200)}`);
}

function toOptions(fields: Record<string, string[] | undefined>): ContactImportOptions {
  const flat: Record<string, string> = {};
  for (const [name, values] of Object.entries(fields)) {
    if (values && values.length > 1) throw validationError(`${name}: given more than once`);
    if (values?.[0] !== undefined) flat[name] = values[0];
  }
  const parsed = v.safeParse(CreateContactImportFieldsSchema, flat);
  if (!parsed.success) throw issueToApiError(parsed.issues[0]);
  const { column_map, on_conflict, segments, topics } = parsed.output;
  return {
    columnMap: column_map,
    onConflict: on_conflict,
    segments: [...new Set(segments.map((s) => s.id))],
    topics,
  };
}

/**
 * Streams the multipart body: the file part flows into the import's chunks as it arrives (with
 * backpressure), the other fields are read as they come; nothing is buffered whole.
 */
async function receiveImport(ctx: AppContext, teamId: string, deps: Parameters<typeof createContactImport>[0]) {
  if (!ctx.is('multipart/form-data'))
    throw validationError('The body must be multipart/form-data with the CSV in a `file` part');
  const maxMb = deps.config.POSTLANE_IMPORT_MAX_MB;
  const file = new PassThrough({ highWaterMark: 1 << 20 });
  let fileName: string | null = null;
  let files = 0;
  const form = formidable({
    maxFiles: 1,
    maxFileSize: maxMb * 1024 * 1024,
    maxTotalFileSize: maxMb * 1024 * 1024,
    maxFields: 10,
    maxFieldsSize: 256 * 1024,
    allowEmptyFiles: true,
    minFileSize: 0,
    fileWriteStreamHandler: (part) => {
      files++;
      fileName = (part as unknown as { originalFilename?: string | null } | undefined)?.originalFilename ?? null;
      return file;
    },
  });
  const fields = form.parse(ctx.req).then(
    ([parsed]) => {
      if (files === 0) file.end();
      return parsed;
    },
    (err: unknown) => {
      const error = multipartError(err, maxMb);
      file.destroy(error);
      throw error;
    },
  );
  // Read only after the file: until then a refusal is the file stream's.
  fields.catch(() => undefined);
  try {
    return await createContactImport(deps, teamId, {
      file,
      get fileName() {
        return fileName;
      },
      options: async () => toOptions(await fields),
    });
  } catch (err) {
    throw multipartError(err, maxMb);
  }
}

export const contactImportRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/contacts/imports',
      operationId: 'createContactImport',
      summary: 'Import contacts from a CSV file',
      tags: TAGS,
      permission: 'full_access',
      multipart: CreateContactImportBodySchema,
      responses: { 201: ContactImportRefSchema },
      examples: { response: CONTACT_IMPORT_REF },
    },
    async ({ auth, deps, ctx }) => presentContactImportRef((await receiveImport(ctx, auth.teamId, deps)).id),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/contacts/imports',
      operationId: 'listContactImports',
      summary: 'List contact imports',
      tags: TAGS,
      permission: 'full_access',
      query: ListContactImportsQuerySchema,
      responses: { 200: ContactImportListSchema },
      examples: { response: exampleList(CONTACT_IMPORT) },
    },
    async ({ input, auth, deps }) =>
      presentList(await listContactImports(deps, auth.teamId, input.query), presentContactImport),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/contacts/imports/:id',
      operationId: 'getContactImport',
      summary: 'Retrieve a contact import',
      tags: TAGS,
      permission: 'full_access',
      params: ContactImportParamSchema,
      responses: { 200: ContactImportSchema },
      examples: { response: CONTACT_IMPORT },
    },
    async ({ input, auth, deps }) => presentContactImport(await getContactImport(deps, auth.teamId, input.params.id)),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/contacts/imports/:id/errors',
      operationId: 'getContactImportErrors',
      summary: 'Download the rows a contact import refused (CSV: row, email, message; the first 1,000)',
      tags: TAGS,
      permission: 'full_access',
      params: ContactImportParamSchema,
      responses: { 200: v.string() },
      examples: { response: CONTACT_IMPORT_ERRORS },
    },
    async ({ input, auth, deps, ctx }) => {
      const csv = await contactImportErrorsCsv(deps, auth.teamId, input.params.id);
      ctx.type = 'text/csv';
      ctx.attachment(`contact-import-${input.params.id}-errors.csv`);
      return csv;
    },
  ),
];
