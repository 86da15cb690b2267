import type * as v from 'valibot';
import { CREATED_AT, ID, LATER_AT } from '../../examples.js';
import type { ContactImportRefSchema, ContactImportSchema } from './contact-imports.schemas.js';

export const CONTACT_IMPORT_REF: v.InferInput<typeof ContactImportRefSchema> = {
  object: 'contact_import',
  id: ID.contactImport,
};

export const CONTACT_IMPORT: v.InferInput<typeof ContactImportSchema> = {
  object: 'contact_import',
  id: ID.contactImport,
  status: 'completed',
  created_at: CREATED_AT,
  completed_at: LATER_AT,
  counts: { total: 100, created: 80, updated: 10, skipped: 5, failed: 5 },
  file_name: 'contacts.csv',
  file_size: 5_321,
  progress: 1,
  failure: null,
};

export const CONTACT_IMPORT_ERRORS =
  'row,email,message\n12,jane.doe@example,"email: must be a single email address, like `Name <user@example.com>`"\n';
