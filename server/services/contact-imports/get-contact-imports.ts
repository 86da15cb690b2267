import type { Page, PageQuery } from '../../db/paginate.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { ContactImportStatus } from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';

/** An import as its readers see it: state, counts and, once it failed, why. */
export interface ContactImportRecord {
  id: string;
  status: ContactImportStatus;
  fileName: string | null;
  fileSize: number;
  rowsDone: number;
  bytesDone: number;
  counts: { total: number; created: number; updated: number; skipped: number; failed: number };
  failure: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

const COLUMNS = `id, status, file_name, file_size, rows_done, bytes_done, created_count, updated_count, skipped_count, failed_count,
  failure, created_at, completed_at`;

interface Row {
  id: string;
  status: ContactImportStatus;
  file_name: string | null;
  file_size: string;
  rows_done: number;
  bytes_done: string;
  created_count: number;
  updated_count: number;
  skipped_count: number;
  failed_count: number;
  failure: string | null;
  created_at: Date | string;
  completed_at: Date | string | null;
}

const toRecord = (row: Row): ContactImportRecord => ({
  id: row.id,
  status: row.status,
  fileName: row.file_name,
  fileSize: Number(row.file_size),
  rowsDone: row.rows_done,
  bytesDone: Number(row.bytes_done),
  counts: {
    total: row.rows_done,
    created: row.created_count,
    updated: row.updated_count,
    skipped: row.skipped_count,
    failed: row.failed_count,
  },
  failure: row.failure,
  // Raw rows carry timestamps as text.
  createdAt: new Date(row.created_at),
  completedAt: row.completed_at === null ? null : new Date(row.completed_at),
});

export async function getContactImport(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
): Promise<ContactImportRecord> {
  const [row] = await sqlQuery<Row>(deps.orm.em, `SELECT ${COLUMNS} FROM contact_import WHERE team_id = ? AND id = ?`, [
    teamId,
    id,
  ]);
  if (!row) throw notFound('Contact import');
  return toRecord(row);
}

/** A team's imports, newest first by (created_at, id) like every list, optionally of one status. */
export async function listContactImports(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  query: PageQuery & { status?: ContactImportStatus },
): Promise<Page<ContactImportRecord>> {
  const em = deps.orm.em;
  let where = 'team_id = ?';
  const bindings: unknown[] = [teamId];
  if (query.status) {
    where += ' AND status = ?';
    bindings.push(query.status);
  }
  const cursorId = query.after ?? query.before;
  if (cursorId) {
    const [cursor] = await sqlQuery<{ created_at: Date }>(
      em,
      'SELECT created_at FROM contact_import WHERE team_id = ? AND id = ?',
      [teamId, cursorId],
    );
    if (!cursor)
      throw validationError(`${query.after ? 'after' : 'before'}: must be the id of an item this list returned`);
    where += ` AND (created_at, id) ${query.after ? '<' : '>'} (?, ?)`;
    bindings.push(cursor.created_at, cursorId);
  }
  const direction = query.before ? 'ASC' : 'DESC';
  const rows = await sqlQuery<Row>(
    em,
    `SELECT ${COLUMNS} FROM contact_import WHERE ${where} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    [...bindings, query.limit + 1],
  );
  const data = rows.slice(0, query.limit).map(toRecord);
  if (query.before) data.reverse();
  return { data, hasMore: rows.length > query.limit };
}

/** The rows an import refused (the first 1,000), in file order, as CSV: `row,email,message`. */
export async function contactImportErrorsCsv(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<string> {
  await getContactImport(deps, teamId, id);
  const rows = await sqlQuery<{ row: number; email: string | null; message: string }>(
    deps.orm.em,
    'SELECT "row", email, message FROM contact_import_error WHERE contact_import_id = ? ORDER BY "row"',
    [id],
  );
  const cell = (value: string | number | null) => {
    const text = value === null ? '' : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return ['row,email,message', ...rows.map((r) => [r.row, r.email, r.message].map(cell).join(','))].join('\n') + '\n';
}
