import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { SecretBox } from '../../security/secret-box.js';
import { type AudienceSource, findContacts } from '../contacts/contact-records.js';
import { deleteContactRecords } from '../contacts/contact-writes.js';
import { addressPatterns } from './address-forms.js';
import { type ColumnShape, SURFACES, type Surface, type SurfaceKind } from './surfaces.js';

export const ERASED = '[erased]';

/** What one erasure removed or rewrote, per kind: the receipt for the data-protection record. */
export type ErasureReceipt = Record<SurfaceKind | 'contacts', number>;

type Patterns = ReturnType<typeof addressPatterns>;

/** The rows written back per statement. */
const WRITE_CHUNK = 500;

/** Thrown to roll a dry run back once it has counted. */
class DryRun extends Error {}

/**
 * The statement selecting a surface's rows that may hold an address, locked, with its bindings:
 * the plain forms on every row, the encoded ones only on text that may hold one (the marker),
 * and the rows derived from those an earlier surface matched (`linked`).
 */
function candidatesSql(
  surface: Surface,
  teamId: string,
  patterns: Patterns,
  links: readonly string[],
  linked: readonly unknown[],
): [string, unknown[]] {
  // Bindings are taken in the order the text is written, which is the order of the `?`s.
  const bindings: unknown[] = [];
  const bind = (value: unknown) => (bindings.push(value), '?');
  // One text per row: NULL columns are left out rather than turning the marker's AND to NULL,
  // which would try every group on every row.
  const asText = (column: string, shape: ColumnShape) =>
    shape === 'bytes' ? `encode("${column}", 'escape')` : `"${column}"::text`;
  const texts = `concat_ws(E'\\n', ${Object.entries(surface.columns)
    .map(([column, shape]) => asText(column, shape))
    .join(', ')})`;
  const any = (pattern: string) => `${texts} ~* ${bind(pattern)}`;
  const derived = () =>
    `"${surface.derivedFrom!.to}"::text IN (SELECT jsonb_array_elements_text(${bind(JSON.stringify(linked))}::jsonb))`;
  const columns = [...Object.keys(surface.columns), ...links].map((column) => `"${column}"`).join(', ');
  const sql = `SELECT "${surface.key}" AS key, ${columns}${surface.derivedFrom ? `, ${derived()} AS derived` : ''}
    FROM "${surface.table}" WHERE ${surface.scope.replace(':team', bind(teamId))} AND (${any(patterns.plain)}
    ${patterns.marker ? `OR (${any(patterns.marker)} AND (${patterns.groups.map(any).join(' OR ')}))` : ''}
    ${surface.derivedFrom ? `OR ${derived()}` : ''}) FOR UPDATE`;
  return [sql, bindings];
}

/** A column's value with every occurrence scrubbed (the same value when there is none). */
function scrubValue(value: unknown, shape: ColumnShape, text: (s: string) => string, forget: string | null): unknown {
  if (value === null || value === undefined) return value;
  // A whole address or list element goes when anything in it is scrubbed.
  const holds = (s: string) => text(s) !== s;
  switch (shape) {
    case 'text':
      return text(value as string);
    case 'address':
      return holds(value as string) ? forget : value;
    case 'addresses':
      return (value as string[]).map((x) => (holds(x) ? ERASED : x));
    case 'json':
      return scrubJson(value, text);
    case 'bytes':
      // Not rewritable: a changed value only tells the delete strategy that the row holds the address.
      return holds((value as Buffer).toString('latin1')) ? ERASED : value;
  }
}

function scrubJson(value: unknown, text: (s: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((v) => scrubJson(v, text));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), scrubJson(v, text)]));
  return value;
}

/**
 * One surface: its candidate rows are read (locked), checked and rewritten in JavaScript, where
 * JSON is walked string by string and every encoding is matched exactly, then written back or
 * deleted. Returns the rows changed.
 */
async function scrubSurface(
  em: EntityManager,
  secrets: SecretBox,
  surface: Surface,
  teamId: string,
  addresses: readonly string[],
  matched: Map<string, Record<string, unknown>[]>,
): Promise<Record<string, unknown>[]> {
  const patterns = addressPatterns(addresses, surface.encodings);
  const links = SURFACES.flatMap((s: Surface) => (s.derivedFrom?.kind === surface.kind ? [s.derivedFrom.from] : []));
  const linked = surface.derivedFrom
    ? (matched.get(surface.derivedFrom.kind) ?? []).map((row) => row[surface.derivedFrom!.from])
    : [];
  const [sql, bindings] = candidatesSql(surface, teamId, patterns, links, linked);
  const rows = await sqlQuery<Record<string, unknown> & { key: string; derived?: boolean }>(em, sql, bindings);
  const erased = new Set(addresses);
  const text = (s: string) =>
    (surface.tokens ?? []).reduce(
      (scrubbed, token) =>
        scrubbed.replace(token.pattern, (whole, found: string) =>
          erased.has(token.reads(secrets, found)?.toLowerCase() ?? '') ? whole.replace(found, ERASED) : whole,
        ),
      s.replace(patterns.exact, ERASED),
    );
  const forget = surface.forget === null ? null : ERASED;
  const changed: Record<string, unknown>[] = [];
  for (const row of rows) {
    // With what derived surfaces need of it (only the registered columns are written back).
    const scrubbed: Record<string, unknown> = Object.fromEntries(links.map((link) => [link, row[link]]));
    let differs = row.derived === true;
    for (const [column, shape] of Object.entries(surface.columns)) {
      scrubbed[column] = scrubValue(row[column], shape, text, forget);
      // Unchanged values are the same object (raw bytes are not serialised to compare).
      differs ||= scrubbed[column] !== row[column] && JSON.stringify(scrubbed[column]) !== JSON.stringify(row[column]);
    }
    // After the columns: a deleted row is found by its key as stored, even when the key is scrubbed too.
    scrubbed[surface.key] = row.key;
    if (differs) changed.push(scrubbed);
  }
  for (let start = 0; start < changed.length; start += WRITE_CHUNK) {
    const chunk = changed.slice(start, start + WRITE_CHUNK);
    if (surface.strategy === 'delete') {
      // The key is unique within the team's rows only (idempotency keys), so the scope comes along.
      await sqlQuery(
        em,
        `DELETE FROM "${surface.table}" WHERE ${surface.scope.replace(/:team/g, '?')} AND "${surface.key}"::text IN (SELECT jsonb_array_elements_text(?::jsonb))`,
        [...(surface.scope.includes(':team') ? [teamId] : []), JSON.stringify(chunk.map((row) => row[surface.key]))],
      );
    } else {
      // Rewritten rows are keyed by id. The table's own row type reads every column shape (text[], jsonb) from JSON.
      const set = Object.keys(surface.columns)
        .map((column) => `"${column}" = v."${column}"`)
        .join(', ');
      await sqlQuery(
        em,
        `UPDATE "${surface.table}" t SET ${set} FROM jsonb_populate_recordset(NULL::"${surface.table}", ?::jsonb) v WHERE t."${surface.key}" = v."${surface.key}"`,
        [JSON.stringify(chunk)],
      );
    }
  }
  matched.set(surface.kind, changed);
  return changed;
}

/**
 * Scrubs addresses from everything the team keeps: deletes their contacts (contact.deleted is
 * emitted, and then reads `[erased]` like every other event), then each stored surface in turn
 * (surfaces.ts), and closes their pending erasure requests. One transaction: all of it happens,
 * or none. `dryRun` does all of it and rolls back, so it counts exactly what a real run changes.
 */
export async function eraseAddresses(
  deps: Pick<Deps, 'orm' | 'secrets'>,
  teamId: string,
  emails: readonly string[],
  { dryRun = false, source = 'api' }: { dryRun?: boolean; source?: AudienceSource } = {},
): Promise<ErasureReceipt> {
  const addresses = [...new Set(emails.map((email) => email.toLowerCase()))];
  const receipt = { contacts: 0 } as ErasureReceipt;
  if (addresses.length === 0) return receipt;
  try {
    await deps.orm.em.transactional(async (em) => {
      const contacts = await findContacts(em, teamId, { emails: addresses }, { lock: true });
      receipt.contacts = contacts.length;
      await deleteContactRecords(em, teamId, contacts, source, false);
      const matched = new Map<string, Record<string, unknown>[]>();
      for (const surface of SURFACES)
        receipt[surface.kind] = (await scrubSurface(em, deps.secrets, surface, teamId, addresses, matched)).length;
      await sqlQuery(
        em,
        `UPDATE erasure_request SET email = '${ERASED}', completed_at = now(), receipt = ?::jsonb WHERE team_id = ? AND completed_at IS NULL AND email IN (SELECT jsonb_array_elements_text(?::jsonb))`,
        [JSON.stringify(receipt), teamId, JSON.stringify(addresses)],
      );
      if (dryRun) throw new DryRun();
    });
  } catch (err) {
    if (!(err instanceof DryRun)) throw err;
  }
  return receipt;
}
