import type { ContactImportRecord } from '../../../services/contact-imports/get-contact-imports.js';

export const presentContactImportRef = (id: string) => ({ object: 'contact_import' as const, id });

export const presentContactImport = (record: ContactImportRecord) => ({
  object: 'contact_import' as const,
  id: record.id,
  status: record.status,
  created_at: record.createdAt.toISOString(),
  completed_at: record.completedAt?.toISOString() ?? null,
  counts: record.counts,
  file_name: record.fileName,
  file_size: record.fileSize,
  progress:
    record.status === 'completed' ? 1 : record.fileSize === 0 ? 0 : Math.min(1, record.bytesDone / record.fileSize),
  failure: record.failure,
});
