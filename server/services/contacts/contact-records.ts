import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { ContactPropertyValue } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** Who made an audience change, as audience events report it. */
export type AudienceSource = 'api' | 'dashboard' | 'hosted_page' | 'one_click';

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
export async function selectContacts(em: EntityManager, sql: string, bindings: readonly unknown[]): Promise<ContactRecord[]> {
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
  // The ids named directly or through an address, each found through its own index: a single OR
  // of the two would have the planner scan the team's contacts.
  return selectContacts(
    em,
    `SELECT ${CONTACT_COLUMNS} FROM contact c
     WHERE c.team_id = ? AND c.id IN (
       SELECT jsonb_array_elements_text(?::jsonb)::uuid
       UNION ALL
       SELECT e.id FROM contact e WHERE e.team_id = ? AND e.email IN (SELECT jsonb_array_elements_text(?::jsonb))
     )
     ORDER BY c.id${options.lock ? ' FOR UPDATE' : ''}`,
    [teamId, JSON.stringify(ids), teamId, JSON.stringify(emails)],
  );
}

/** The path's `{id or email}`: an id when it looks like one, else an address; 404 for another team's. */
export async function requireContact(em: EntityManager, teamId: string, idOrEmail: string, options: { lock?: boolean } = {}): Promise<ContactRecord> {
  const [contact] = await findContacts(em, teamId, UUID.test(idOrEmail) ? { ids: [idOrEmail] } : { emails: [idOrEmail] }, options);
  if (!contact) throw notFound('Contact');
  return contact;
}

/** The `data` of every contact.* event. */
export function contactEventData(contact: ContactRecord, source: AudienceSource): Record<string, unknown> {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.firstName,
    last_name: contact.lastName,
    unsubscribed: contact.unsubscribed,
    created_at: new Date(contact.createdAt).toISOString(),
    updated_at: new Date(contact.updatedAt).toISOString(),
    source,
  };
}
