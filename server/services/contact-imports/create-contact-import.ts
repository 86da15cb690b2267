import { newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { TopicSubscription } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { checkReferences, loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { CHUNK_BYTES, type ColumnMap, type Delimiter, readHeader, resolveColumns, Utf8Check } from './csv-file.js';

export interface ContactImportOptions {
  columnMap?: ColumnMap;
  onConflict: 'upsert' | 'skip';
  segments: string[];
  topics: { id: string; subscription: TopicSubscription }[];
}

export interface ContactImportUpload {
  /** The CSV bytes, read once as they arrive: never held whole. */
  file: AsyncIterable<Uint8Array>;
  fileName?: string | null;
  /**
   * The import's options. Multipart senders (the SDK) put them after the file, so they are read
   * only once the file has been stored.
   */
  options: () => Promise<ContactImportOptions> | ContactImportOptions;
}

/**
 * Stores an upload and queues its import: the file goes into the database 1 MiB at a time as it
 * arrives (checked to be UTF-8 text, its header read from the first chunk), so any worker can run
 * the import and memory stays bounded whatever the file's size. Everything is one transaction: a
 * refused or interrupted upload leaves nothing behind. The column map is resolved against the
 * header and the team's property declarations here, so a wrong name is refused at once.
 */
export async function createContactImport(
  deps: Pick<Deps, 'orm' | 'config' | 'jobs' | 'logger' | 'clock'>,
  teamId: string,
  upload: ContactImportUpload,
): Promise<{ id: string }> {
  const id = newId();
  const maxBytes = deps.config.POSTLANE_IMPORT_MAX_MB * 1024 * 1024;
  await deps.orm.em.transactional(async (em) => {
    const now = deps.clock();
    await sqlQuery(
      em,
      `INSERT INTO contact_import (id, created_at, updated_at, team_id, status, file_name, file_size, chunk_count, delimiter, header, column_map, on_conflict)
       VALUES (?, ?, ?, ?, 'queued', ?, 0, 0, ',', '[]', '{}', 'skip')`,
      [id, now, now, teamId, upload.fileName?.slice(0, 255) ?? null],
    );
    const utf8 = new Utf8Check();
    let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let filled = 0;
    let size = 0;
    let seq = 0;
    let head: { delimiter: Delimiter; header: string[] } | null = null;
    const store = async (last: boolean) => {
      const bytes = chunk.subarray(0, filled);
      utf8.push(bytes, last);
      if (seq === 0) head = readHeader(bytes, last);
      await sqlQuery(em, 'INSERT INTO contact_import_chunk (contact_import_id, seq, data) VALUES (?, ?, ?)', [
        id,
        seq++,
        bytes,
      ]);
      chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      filled = 0;
    };
    for await (const piece of upload.file) {
      size += piece.length;
      if (size > maxBytes)
        throw validationError(
          `file: larger than ${deps.config.POSTLANE_IMPORT_MAX_MB} MB (POSTLANE_IMPORT_MAX_MB)`,
          413,
        );
      for (let at = 0; at < piece.length;) {
        const n = Math.min(piece.length - at, CHUNK_BYTES - filled);
        chunk.set(piece.subarray(at, at + n), filled);
        filled += n;
        at += n;
        if (filled === CHUNK_BYTES) await store(false);
      }
    }
    if (size === 0) throw validationError('file: is missing or empty (a CSV file with a header line)');
    if (filled > 0) await store(true);
    else utf8.push(new Uint8Array(), true);
    const { delimiter, header } = head!;

    const options = await upload.options();
    const catalog = await loadAudienceCatalog(em, teamId);
    const problem = checkReferences({ segments: options.segments, topics: options.topics }, catalog);
    if (problem) throw validationError(problem);
    const columns = resolveColumns(header, options.columnMap, catalog);
    await sqlQuery(
      em,
      `UPDATE contact_import SET file_size = ?, chunk_count = ?, delimiter = ?, header = ?::jsonb, column_map = ?::jsonb,
         on_conflict = ?, segments = ?::jsonb, topics = ?::jsonb WHERE id = ?`,
      [
        size,
        seq,
        delimiter,
        JSON.stringify(header),
        JSON.stringify(columns),
        options.onConflict,
        JSON.stringify(options.segments),
        JSON.stringify(options.topics),
        id,
      ],
    );
  });
  await enqueueContactImport(deps, id);
  return { id };
}

export async function enqueueContactImport(deps: Pick<Deps, 'jobs' | 'logger'>, importId: string): Promise<void> {
  try {
    await deps.jobs.enqueue('contact-import.run', { importId });
  } catch (err) {
    deps.logger.warn(
      { err: (err as Error).message, importId },
      'enqueue failed; the outbox sweeper will pick the import up',
    );
  }
}
