import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { ContactPropertyValue } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** Who made an audience change, as audience events report it. */
export type AudienceSource = 'api' | 'dashboard' | 'hosted_page' | 'one_click' | 'import';

/** A contact row as the contact services read and write it (raw SQL, so bulk work skips the unit of work). */
export interface ContactRecord {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  unsubscribed: boolean;
  properties: Record<string, ContactPropertyValue>;
  createdAt: Date;
  updatedAt: Date;
}

export const CONTACT_COLUMNS = `c.id, c.email, c.first_name AS "firstName", c.last_name AS "lastName", c.unsubscribed, c.properties,
  c.created_at AS "createdAt", c.updated_at AS "updatedAt"`;

/** Contacts selected with CONTACT_COLUMNS from `contact c`; the driver hands timestamps over as text. */
export async function selectContacts(
  em: EntityManager,
  sql: string,
  bindings: readonly unknown[],
): Promise<ContactRecord[]> {
  const rows = await sqlQuery<ContactRecord>(em, sql, bindings);
  return rows.map((row) => ({ ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) }));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The contacts of a team named by id or (case-insensitively) by address; unknown ones are simply absent. */
export async function findContacts(
  em: EntityManager,
  teamId: string,
  refs: { ids?: readonly string[]; emails?: readonly string[] },
  options: { lock?: boolean } = {},
): Promise<ContactRecord[]> {
  const ids = (refs.ids ?? []).filter((id) => UUID.test(id));
  const emails = (refs.emails ?? []).map((email) => email.toLowerCase());
  if (!ids.length && !emails.length) return [];
  // Each id or address is looked up on its own through its index (a subquery per item, which the
  // planner cannot turn into a scan): the planner's row estimates lag behind a table an import is
  // filling, and its set plans then walked all the team's contacts, 20 ms per call at 20,000.
  return selectContacts(
    em,
    `SELECT ${CONTACT_COLUMNS} FROM contact c
     WHERE c.id = ANY(ARRAY(
       SELECT (SELECT e.id FROM contact e WHERE e.id = x.id::uuid AND e.team_id = ?) FROM jsonb_array_elements_text(?::jsonb) AS x(id)
       UNION ALL
       SELECT (SELECT e.id FROM contact e WHERE e.team_id = ? AND e.email = x.email) FROM jsonb_array_elements_text(?::jsonb) AS x(email)
     ))
     ORDER BY c.id${options.lock ? ' FOR UPDATE' : ''}`,
    [teamId, JSON.stringify(ids), teamId, JSON.stringify(emails)],
  );
}

/** The path's `{id or email}`: an id when it looks like one, else an address; 404 for another team's. */
export async function requireContact(
  em: EntityManager,
  teamId: string,
  idOrEmail: string,
  options: { lock?: boolean } = {},
): Promise<ContactRecord> {
  const [contact] = await findContacts(
    em,
    teamId,
    UUID.test(idOrEmail) ? { ids: [idOrEmail] } : { emails: [idOrEmail] },
    options,
  );
  if (!contact) throw notFound('Contact');
  return contact;
}

const lastFormatted = { date: undefined as Date | undefined, time: NaN, iso: '' };
/** A bulk write stamps all its contacts with one Date: it is formatted once, not twice per contact. */
function isoString(date: Date): string {
  if (date !== lastFormatted.date || date.getTime() !== lastFormatted.time) {
    const copy = new Date(date);
    Object.assign(lastFormatted, {
      date: date instanceof Date ? date : undefined,
      time: copy.getTime(),
      iso: copy.toISOString(),
    });
  }
  return lastFormatted.iso;
}

/** The `data` of every contact.* event. */
export function contactEventData(contact: ContactRecord, source: AudienceSource): Record<string, unknown> {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.firstName,
    last_name: contact.lastName,
    unsubscribed: contact.unsubscribed,
    created_at: isoString(contact.createdAt),
    updated_at: isoString(contact.updatedAt),
    source,
  };
}
