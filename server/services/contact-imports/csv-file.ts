import { parse as parseSync } from 'csv-parse/sync';
import type { ContactPropertyValue } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { contactAddress } from '../../mail/contact-address.js';
import type { AudienceCatalog } from '../contacts/audience-catalog.js';
import type { ContactInput } from '../contacts/create-contacts.js';

/** The upload is kept in rows of this many bytes; a resumed import starts at any byte of any chunk. */
export const CHUNK_BYTES = 1 << 20;
/** The header line must end within the first this many bytes. */
const HEADER_BYTES = 64 << 10;
/** Longest record (one contact's row, quoted newlines included) the parser accepts. */
export const MAX_RECORD_BYTES = 64 << 10;

export type Delimiter = ',' | ';' | '\t';
const DELIMITERS: readonly Delimiter[] = [',', ';', '\t'];

export type PropertyType = 'string' | 'number' | 'boolean';

/** `column_map` as the wire has it: contact fields and property keys to CSV column names. */
export interface ColumnMap {
  email?: string;
  first_name?: string;
  last_name?: string;
  unsubscribed?: string;
  properties?: Record<string, { column: string; type?: PropertyType }>;
}

/** A column map resolved against a header: field to column index. */
export interface ResolvedColumns {
  email: number;
  firstName?: number;
  lastName?: number;
  unsubscribed?: number;
  properties: { key: string; index: number; type: PropertyType }[];
}

/**
 * Refuses what is not UTF-8 text, in words a spreadsheet user can act on. UTF-16 and UTF-32 are
 * told by their byte-order mark; anything else that is not valid UTF-8 by the first bad byte.
 */
export class Utf8Check {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private offset = 0;

  push(bytes: Uint8Array, last = false): void {
    if (this.offset === 0 && bytes.length >= 2) {
      const utf32 = bytes.length >= 4 && bytes[2] === 0 && bytes[3] === 0 && bytes[0] === 0xff && bytes[1] === 0xfe;
      if (utf32 || (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0xfe && bytes[3] === 0xff))
        throw validationError('file: the file is UTF-32 encoded; save it as CSV in UTF-8 and upload it again');
      if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
        throw validationError(
          'file: the file is UTF-16 encoded ("Unicode text"); save it as "CSV UTF-8" and upload it again',
        );
    }
    try {
      this.decoder.decode(bytes, { stream: !last });
    } catch {
      throw validationError(
        `file: the file is not UTF-8 (an invalid byte sequence within bytes ${this.offset}–${this.offset + bytes.length}); ` +
          'it may be Windows-1252 or Latin-1: save it as "CSV UTF-8" and upload it again',
      );
    }
    this.offset += bytes.length;
  }
}

/** The separator the header line uses most outside quotes: `,`, `;` or tab (a single column: `,`). */
function detectDelimiter(line: string): Delimiter {
  const counts = new Map<Delimiter, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch as Delimiter)) counts.set(ch as Delimiter, counts.get(ch as Delimiter)! + 1);
  }
  let best: Delimiter = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}

/** The header of a file from its first bytes (a BOM skipped): its column names and separator. */
export function readHeader(head: Buffer, complete: boolean): { delimiter: Delimiter; header: string[] } {
  let text = head.subarray(0, HEADER_BYTES).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const end = text.search(/\r?\n/);
  if (end < 0 && !complete && head.length >= HEADER_BYTES)
    throw validationError(`file: the header line is longer than ${HEADER_BYTES / 1024} KiB`);
  const line = end < 0 ? text : text.slice(0, end);
  if (line.trim() === '') throw validationError('file: the file is empty, or its first line is blank (the header)');
  const delimiter = detectDelimiter(line);
  let header: string[];
  try {
    [header] = parseSync(line, { delimiter, relax_quotes: true }) as [string[]];
  } catch (err) {
    throw validationError(`file: the header line is not valid CSV (${(err as Error).message})`);
  }
  header = header.map((name) => name.trim());
  if (header.length > 1000) throw validationError('file: the header has more than 1000 columns');
  return { delimiter, header };
}

const normalise = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '_');

/** Columns recognised when no column_map is given: `email`, `first_name`, `last_name`, `unsubscribed`, however spelled. */
const DEFAULT_NAMES: Record<'email' | 'first_name' | 'last_name' | 'unsubscribed', readonly string[]> = {
  email: ['email', 'e_mail', 'email_address'],
  first_name: ['first_name', 'firstname', 'first'],
  last_name: ['last_name', 'lastname', 'last'],
  unsubscribed: ['unsubscribed'],
};

/**
 * Resolves a column map against a header (exact names first, then ignoring case and spacing) and
 * the team's property declarations. No map: the usual column names are recognised.
 */
export function resolveColumns(
  header: readonly string[],
  map: ColumnMap | undefined,
  catalog: Pick<AudienceCatalog, 'properties'>,
): ResolvedColumns {
  const find = (field: string, column: string): number => {
    let index = header.indexOf(column);
    if (index < 0) index = header.findIndex((name) => normalise(name) === normalise(column));
    if (index < 0)
      throw validationError(
        `column_map.${field}: the file has no column "${column}" (its columns: ${header.slice(0, 20).join(', ')}${header.length > 20 ? ', …' : ''})`,
      );
    return index;
  };
  const guess = (field: keyof typeof DEFAULT_NAMES) => {
    const index = header.findIndex((name) => DEFAULT_NAMES[field].includes(normalise(name)));
    return index < 0 ? undefined : index;
  };
  const optional = (field: 'first_name' | 'last_name' | 'unsubscribed') =>
    map?.[field] !== undefined ? find(field, map[field]) : map ? undefined : guess(field);
  const email = map?.email !== undefined ? find('email', map.email) : guess('email');
  if (email === undefined)
    throw validationError(
      map
        ? 'column_map.email: name the column that holds the addresses'
        : `column_map: the file has no "email" column (its columns: ${header.slice(0, 20).join(', ')}); name it in column_map.email`,
    );
  const properties = Object.entries(map?.properties ?? {}).map(([key, { column, type }]) => {
    const declared = catalog.properties.get(key);
    if (!declared)
      throw validationError(
        `column_map.properties.${key}: is not a contact property of this team (create it with POST /contact-properties first)`,
      );
    const wanted = type ?? (declared.type as PropertyType);
    // Contact properties here are strings or numbers: a `boolean` mapping names no declarable property.
    if (wanted !== declared.type)
      throw validationError(`column_map.properties.${key}.type: the property is declared as a ${declared.type}`);
    return { key, index: find(`properties.${key}.column`, column), type: wanted };
  });
  return {
    email,
    firstName: optional('first_name'),
    lastName: optional('last_name'),
    unsubscribed: optional('unsubscribed'),
    properties,
  };
}

const TRUE = new Set(['true', 'yes', 'y', '1', 't']);
const FALSE = new Set(['false', 'no', 'n', '0', 'f', '']);

function toBoolean(cell: string): boolean | null {
  const value = cell.trim().toLowerCase();
  return TRUE.has(value) ? true : FALSE.has(value) ? false : null;
}

function nameCell(cell: string | undefined, field: string): string | undefined {
  const value = cell?.trim();
  if (!value) return undefined;
  if (value.length > 255) throw new RowProblem(`${field}: must be at most 255 characters`);
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw new RowProblem(`${field}: must not contain control characters or line breaks`);
  return value;
}

class RowProblem extends Error {}

/**
 * One CSV record as a contact, or why it is refused (the message never holds the row's address).
 * An empty cell leaves its field unset; extra or missing trailing cells are allowed.
 */
export function recordToContact(
  record: readonly string[],
  columns: ResolvedColumns,
  extra: Pick<ContactInput, 'segments' | 'topics'>,
): { contact: ContactInput } | { problem: string; email: string | null } {
  const raw = record[columns.email]?.trim() ?? '';
  if (!raw) return { problem: 'email: is empty', email: null };
  const parsed = contactAddress(raw);
  if (!('address' in parsed)) return { problem: `email: ${parsed.problem}`, email: raw.slice(0, 320) };
  try {
    const contact: ContactInput = { email: parsed.address, ...extra };
    contact.firstName = nameCell(record[columns.firstName ?? -1], 'first_name');
    contact.lastName = nameCell(record[columns.lastName ?? -1], 'last_name');
    if (columns.unsubscribed !== undefined) {
      const flag = toBoolean(record[columns.unsubscribed] ?? '');
      if (flag === null) throw new RowProblem('unsubscribed: must be true or false (also yes/no, 1/0)');
      contact.unsubscribed = flag || undefined;
    }
    if (columns.properties.length) {
      const properties: Record<string, ContactPropertyValue> = {};
      for (const { key, index, type } of columns.properties) {
        const cell = record[index];
        if (cell === undefined || cell.trim() === '') continue;
        if (type === 'number') {
          const n = Number(cell.trim());
          if (!Number.isFinite(n)) throw new RowProblem(`properties.${key}: must be a number`);
          properties[key] = n;
        } else {
          if (cell.includes('\u0000')) throw new RowProblem(`properties.${key}: must not contain NUL characters`);
          properties[key] = cell;
        }
      }
      contact.properties = properties;
    }
    return { contact };
  } catch (err) {
    if (err instanceof RowProblem) return { problem: err.message, email: parsed.address };
    throw err;
  }
}
