import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { CsvError, parse } from 'csv-parse';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { ContactImportStatus, TopicSubscription } from '../../entities/index.js';
import { type CreateContactsResult, createContacts, type IndexedContact } from '../contacts/create-contacts.js';
import { enqueueContactImport } from './create-contact-import.js';
import { CHUNK_BYTES, type Delimiter, MAX_RECORD_BYTES, recordToContact, type ResolvedColumns } from './csv-file.js';

/** Refused rows kept per import (the counts cover them all). */
export const KEPT_ERRORS = 1000;
/** One job run works this long, then hands over to a fresh run so other jobs get their turn. */
const RUN_BUDGET_MS = 60_000;

interface ImportRow {
  team_id: string;
  status: ContactImportStatus;
  chunk_count: number;
  delimiter: Delimiter;
  column_map: ResolvedColumns;
  on_conflict: 'upsert' | 'skip';
  segments: string[];
  topics: { id: string; subscription: TopicSubscription }[];
  bytes_done: string;
  rows_done: number;
}

export interface ImportProgress {
  rows: number;
  bytes: number;
}

/** Another run moved the cursor (it took over after a lock expired): this one stops. */
class Superseded extends Error {}

type RunDeps = Pick<Deps, 'orm' | 'config' | 'jobs' | 'logger' | 'clock'>;

/** The upload from a byte on: one chunk in memory at a time (read in the caller's transaction, if any: a dry run's). */
async function* readUpload(deps: RunDeps, importId: string, from: number, chunks: number) {
  const em = deps.orm.em;
  for (let seq = Math.floor(from / CHUNK_BYTES); seq < chunks; seq++) {
    const [row] = await sqlQuery<{ data: Buffer }>(
      em,
      'SELECT data FROM contact_import_chunk WHERE contact_import_id = ? AND seq = ?',
      [importId, seq],
    );
    if (!row) throw new Error(`contact import ${importId}: chunk ${seq} is missing`);
    yield seq === Math.floor(from / CHUNK_BYTES) ? row.data.subarray(from % CHUNK_BYTES) : row.data;
  }
}

/**
 * Works an import forward from its cursor: parses the upload where the last committed batch ended
 * (a byte offset at a record boundary), turns each record into a contact and writes them in
 * batches through createContacts, the same use case as the contacts API (cap, conflicts, segments,
 * topics, contact.created events). Each batch and the cursor move commit together under the
 * import's row lock, so a run killed anywhere resumes at the next row: no row twice, counts exact.
 * Returns once the import is finished, handed over (budget spent, shutdown) or taken by another run.
 */
export async function runContactImport(
  deps: RunDeps,
  importId: string,
  onProgress?: (progress: ImportProgress) => void,
): Promise<ContactImportStatus | null> {
  const [row] = await sqlQuery<ImportRow>(deps.orm.em, 'SELECT * FROM contact_import WHERE id = ?', [importId]);
  if (!row || row.status === 'completed' || row.status === 'failed') return row?.status ?? null;
  const started = Date.now();
  let bytesDone = Number(row.bytes_done);
  let rowsDone = row.rows_done;
  const extra = {
    segments: row.segments,
    topics: row.topics,
  };
  const parser = Readable.from(readUpload(deps, importId, bytesDone, row.chunk_count)).pipe(
    parse({
      bom: bytesDone === 0,
      delimiter: row.delimiter,
      relax_column_count: true,
      skip_empty_lines: true,
      info: true,
      max_record_size: MAX_RECORD_BYTES,
    }),
  );
  let header = bytesDone === 0;
  let batch: string[][] = [];
  let batchEnd = bytesDone;
  const flush = async () => {
    const records = batch;
    batch = [];
    await writeBatch(deps, importId, row, records, { rows: rowsDone, bytes: bytesDone }, batchEnd, extra);
    rowsDone += records.length;
    bytesDone = batchEnd;
    onProgress?.({ rows: rowsDone, bytes: bytesDone });
  };
  const start = bytesDone;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      const end = start + info.bytes;
      if (header) {
        header = false;
        batchEnd = end;
        continue;
      }
      batch.push(record);
      batchEnd = end;
      if (batch.length >= deps.config.POSTLANE_IMPORT_BATCH_SIZE) {
        await flush();
        if (Date.now() - started > RUN_BUDGET_MS || deps.jobs.stopping.aborted) {
          parser.destroy();
          await enqueueContactImport(deps, importId);
          return 'in_progress';
        }
      }
    }
    if (batch.length > 0) await flush();
    return await finish(deps, importId, rowsDone, 'completed', null);
  } catch (err) {
    parser.destroy();
    if (err instanceof Superseded) return null;
    if (err instanceof CsvError) {
      // What is left of the file cannot be read: the rows before stay imported, the import fails saying where.
      const message = `row ${rowsDone + batch.length + 1}: the CSV cannot be read from here on (${err.message.slice(0, 300)})`;
      if (batch.length > 0) await flush();
      return await finish(deps, importId, rowsDone, 'failed', message);
    }
    throw err;
  }
}

/** One batch and the cursor move, in one transaction under the import's row lock. */
async function writeBatch(
  deps: RunDeps,
  importId: string,
  head: ImportRow,
  records: readonly string[][],
  cursor: ImportProgress,
  endBytes: number,
  extra: { segments: string[]; topics: { id: string; subscription: TopicSubscription }[] },
): Promise<void> {
  const items: IndexedContact[] = [];
  const refused: { row: number; email: string | null; message: string }[] = [];
  records.forEach((record, i) => {
    const row = cursor.rows + i + 1;
    const result = recordToContact(record, head.column_map, extra);
    if ('contact' in result) items.push({ index: row, contact: result.contact });
    else refused.push({ row, email: result.email, message: result.problem });
  });
  await deps.orm.em.transactional(async (em) => {
    const [locked] = await sqlQuery<{ rows_done: number; status: ContactImportStatus; failed_count: number }>(
      em,
      'SELECT rows_done, status, failed_count FROM contact_import WHERE id = ? FOR UPDATE SKIP LOCKED',
      [importId],
    );
    if (!locked || locked.rows_done !== cursor.rows || (locked.status !== 'queued' && locked.status !== 'in_progress'))
      throw new Superseded();
    const result: CreateContactsResult = items.length
      ? await createContacts(deps, head.team_id, items, {
          onConflict: head.on_conflict,
          validation: 'permissive',
          source: 'import',
          label: () => '',
        })
      : { data: [], counts: { created: 0, updated: 0, skipped: 0, failed: 0 }, errors: [] };
    // One address twice in a batch is one group to createContacts, every row reported as the group; here a
    // later row of a contact the batch created counts as an update of it, as it would in a later batch.
    const counts = { created: 0, updated: 0, skipped: 0 };
    const seen = new Set<string>();
    for (const { id, status } of result.data) {
      counts[status === 'created' && seen.has(id) ? 'updated' : status]++;
      seen.add(id);
    }
    if (deps.config.POSTLANE_TEST_SEND_DELAY_MS > 0) await sleep(deps.config.POSTLANE_TEST_SEND_DELAY_MS);
    const emails = new Map(items.map(({ index, contact }) => [index, contact.email]));
    const errors = [
      ...refused,
      ...result.errors.map(({ index, message }) => ({ row: index, email: emails.get(index) ?? null, message })),
    ].sort((a, b) => a.row - b.row);
    const room = KEPT_ERRORS - locked.failed_count;
    if (room > 0 && errors.length > 0)
      await sqlQuery(
        em,
        `INSERT INTO contact_import_error (contact_import_id, "row", email, message)
         SELECT ?, "row", email, message FROM jsonb_to_recordset(?::jsonb) AS r("row" int, email text, message text)
         ON CONFLICT DO NOTHING`,
        [importId, JSON.stringify(errors.slice(0, room))],
      );
    await sqlQuery(
      em,
      `UPDATE contact_import SET status = 'in_progress', bytes_done = ?, rows_done = ?, created_count = created_count + ?,
         updated_count = updated_count + ?, skipped_count = skipped_count + ?, failed_count = failed_count + ?, updated_at = ?
       WHERE id = ?`,
      [
        endBytes,
        cursor.rows + records.length,
        counts.created,
        counts.updated,
        counts.skipped,
        errors.length,
        deps.clock(),
        importId,
      ],
    );
  });
}

/** Ends an import (its upload is deleted with it): once, by the run whose cursor is current. */
async function finish(
  deps: RunDeps,
  importId: string,
  rowsDone: number,
  status: 'completed' | 'failed',
  failure: string | null,
): Promise<ContactImportStatus | null> {
  return deps.orm.em.transactional(async (em) => {
    const [locked] = await sqlQuery<{ rows_done: number; status: ContactImportStatus }>(
      em,
      'SELECT rows_done, status FROM contact_import WHERE id = ? FOR UPDATE',
      [importId],
    );
    if (!locked || locked.rows_done !== rowsDone || (locked.status !== 'queued' && locked.status !== 'in_progress'))
      return null;
    const now = deps.clock();
    await sqlQuery(
      em,
      'UPDATE contact_import SET status = ?, failure = ?, completed_at = ?, updated_at = ? WHERE id = ?',
      [status, failure, now, now, importId],
    );
    await sqlQuery(em, 'DELETE FROM contact_import_chunk WHERE contact_import_id = ?', [importId]);
    deps.logger.info({ importId, status, rows: rowsDone }, 'contact import finished');
    return status;
  });
}

/**
 * Imports whose run was lost (a worker killed with its job, an enqueue that failed): queued or in
 * progress and untouched for POSTLANE_SWEEP_AFTER_SECONDS. Their job is enqueued again; a run
 * still going meanwhile is harmless (the cursor admits one writer per batch).
 */
export async function sweepContactImports(deps: RunDeps): Promise<number> {
  const stale = await sqlQuery<{ id: string }>(
    deps.orm.em,
    `SELECT id FROM contact_import WHERE status IN ('queued', 'in_progress') AND updated_at < ? ORDER BY updated_at LIMIT 100`,
    [new Date(deps.clock().getTime() - deps.config.POSTLANE_SWEEP_AFTER_SECONDS * 1000)],
  );
  for (const { id } of stale) await enqueueContactImport(deps, id);
  return stale.length;
}
