import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { type AudienceSource, findContacts } from '../contacts/contact-records.js';
import { deleteContactRecords } from '../contacts/contact-writes.js';

export const ERASED = '[erased]';

/** What one erasure removed or rewrote, per kind: the receipt for the data-protection record. */
export type ErasureReceipt = Record<(typeof SCRUBS)[number]['kind'] | 'contacts', number>;

/**
 * Every place an address can be kept, as one statement each over the team's rows: `match` selects
 * the rows that hold it (`:p` is the address pattern, `:team` the team), `apply` rewrites or
 * deletes them. test/integration/http/erasure.test.ts proves the list complete: it fills every
 * table with the address and then finds it nowhere in a pg_dump, and it checks that every text
 * column of the schema is either listed here or known to hold no recipient's data.
 */
const SCRUBS = [
  {
    kind: 'attachments',
    // Binary contents cannot be scrubbed: the attachments of mail sent to the address go.
    match: `email_attachment a WHERE a.email_id IN (SELECT r.email_id FROM email_recipient r JOIN email e ON e.id = r.email_id WHERE e.team_id = :team AND r.address ~* :p)`,
    apply: `DELETE FROM email_attachment WHERE id IN (SELECT a.id FROM {match})`,
  },
  {
    kind: 'emails',
    match: `email e WHERE e.team_id = :team AND (array_to_string(e."to" || e.cc || e.bcc || e.reply_to, ' ') ~* :p OR e."from" ~* :p OR e.subject ~* :p
              OR e.html ~* :p OR e.text ~* :p OR e.last_error ~* :p OR e.headers::text ~* :p)`,
    apply: `UPDATE email e SET
              "to" = ARRAY(SELECT CASE WHEN x ~* :p THEN '${ERASED}' ELSE x END FROM unnest(e."to") x),
              cc = ARRAY(SELECT CASE WHEN x ~* :p THEN '${ERASED}' ELSE x END FROM unnest(e.cc) x),
              bcc = ARRAY(SELECT CASE WHEN x ~* :p THEN '${ERASED}' ELSE x END FROM unnest(e.bcc) x),
              reply_to = ARRAY(SELECT CASE WHEN x ~* :p THEN '${ERASED}' ELSE x END FROM unnest(e.reply_to) x),
              "from" = CASE WHEN e."from" ~* :p THEN '${ERASED}' ELSE e."from" END,
              subject = regexp_replace(e.subject, :p, '${ERASED}', 'gi'),
              html = regexp_replace(e.html, :p, '${ERASED}', 'gi'),
              text = regexp_replace(e.text, :p, '${ERASED}', 'gi'),
              last_error = regexp_replace(e.last_error, :p, '${ERASED}', 'gi'),
              headers = regexp_replace(e.headers::text, :p, '${ERASED}', 'gi')::jsonb
            WHERE e.id IN (SELECT e.id FROM {match})`,
  },
  {
    kind: 'recipients',
    match: `email_recipient r WHERE r.email_id IN (SELECT id FROM email WHERE team_id = :team) AND (r.address ~* :p OR r.response ~* :p)`,
    apply: `UPDATE email_recipient r SET address = CASE WHEN r.address ~* :p THEN '${ERASED}' ELSE r.address END, response = regexp_replace(r.response, :p, '${ERASED}', 'gi')
            WHERE r.id IN (SELECT r.id FROM {match})`,
  },
  {
    kind: 'events',
    match: `event v WHERE v.team_id = :team AND v.payload::text ~* :p`,
    apply: `UPDATE event v SET payload = regexp_replace(v.payload::text, :p, '${ERASED}', 'gi')::jsonb WHERE v.id IN (SELECT v.id FROM {match})`,
  },
  {
    kind: 'webhook_deliveries',
    // Retries send the stored body, so they carry the scrubbed one from now on.
    match: `webhook_delivery d WHERE d.team_id = :team AND (d.body ~* :p OR d.last_error ~* :p)`,
    apply: `UPDATE webhook_delivery d SET body = regexp_replace(d.body, :p, '${ERASED}', 'gi'), last_error = regexp_replace(d.last_error, :p, '${ERASED}', 'gi')
            WHERE d.id IN (SELECT d.id FROM {match})`,
  },
  {
    kind: 'webhook_attempts',
    match: `webhook_attempt a WHERE a.delivery_id IN (SELECT id FROM webhook_delivery WHERE team_id = :team) AND a.response ~* :p`,
    apply: `UPDATE webhook_attempt a SET response = regexp_replace(a.response, :p, '${ERASED}', 'gi') WHERE a.id IN (SELECT a.id FROM {match})`,
  },
  {
    kind: 'api_logs',
    match: `api_log l WHERE l.team_id = :team AND (l.endpoint ~* :p OR l.request_body::text ~* :p OR l.response_body::text ~* :p)`,
    apply: `UPDATE api_log l SET endpoint = regexp_replace(l.endpoint, :p, '${ERASED}', 'gi'),
              request_body = regexp_replace(l.request_body::text, :p, '${ERASED}', 'gi')::jsonb,
              response_body = regexp_replace(l.response_body::text, :p, '${ERASED}', 'gi')::jsonb
            WHERE l.id IN (SELECT l.id FROM {match})`,
  },
  {
    kind: 'idempotency_records',
    // A stored answer is replayed as is, so the key goes rather than replaying a rewritten answer.
    match: `idempotency_key k WHERE k.team_id = :team AND (k.key ~* :p OR k.response::text ~* :p)`,
    apply: `DELETE FROM idempotency_key WHERE (team_id, key) IN (SELECT k.team_id, k.key FROM {match})`,
  },
  {
    kind: 'captured_messages',
    // Raw MIME may carry the address base64-encoded, where no pattern finds it: whole messages go.
    match: `captured_message c WHERE c.message_id IN (SELECT message_id FROM email WHERE team_id = :team)
              AND (array_to_string(c.envelope_to, ' ') ~* :p OR c.envelope_from ~* :p OR c.raw ~* :p)`,
    apply: `DELETE FROM captured_message WHERE id IN (SELECT c.id FROM {match})`,
  },
  {
    kind: 'tracking_clicks',
    // A followed link can carry the address (`?email=`); the rows only serve burst detection, so they go.
    match: `tracking_click c WHERE c.email_id IN (SELECT id FROM email WHERE team_id = :team) AND c.link ~* :p`,
    apply: `DELETE FROM tracking_click WHERE id IN (SELECT c.id FROM {match})`,
  },
  {
    kind: 'suppressions',
    // The keyed hash stays, so the address is still recognised as suppressed.
    match: `suppression s WHERE s.team_id = :team AND s.email ~* :p`,
    apply: `UPDATE suppression s SET email = NULL WHERE s.id IN (SELECT s.id FROM {match})`,
  },
] as const;

/**
 * One case-insensitive pattern for every address, never matching inside a longer one (ann@x.com
 * in joann@x.com or ann@x.com.au). A hyphen before it does not stop a match: keys and paths such as
 * `welcome-ann@x.com` hold the address, and scrubbing one more look-alike is the safer mistake.
 */
export function addressPattern(emails: readonly string[]): string {
  const escaped = emails.map((email) => email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return `(?<![[:alnum:]._%+])(?:${escaped.join('|')})(?![[:alnum:]_-]|\\.[[:alnum:]])`;
}

/** Named `:team` and `:p` placeholders become positional ones, in order. */
function bind(sql: string, teamId: string, pattern: string): [string, unknown[]] {
  const bindings: unknown[] = [];
  const text = sql.replace(/:team|:p/g, (name) => {
    bindings.push(name === ':team' ? teamId : pattern);
    return '?';
  });
  return [text, bindings];
}

async function count(em: EntityManager, match: string, teamId: string, pattern: string): Promise<number> {
  const [sql, bindings] = bind(`SELECT count(*)::int AS n FROM ${match}`, teamId, pattern);
  const [row] = await sqlQuery<{ n: number }>(em, sql, bindings);
  return row!.n;
}

/**
 * Scrubs addresses from everything the team keeps: deletes their contacts (contact.deleted is
 * emitted, and then reads `[erased]` like every other event), rewrites or deletes each row that
 * holds them, keeps only the keyed hash of suppressed ones, and closes their pending erasure
 * requests. One transaction: all of it happens, or none. `dryRun` counts without changing anything.
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
  const pattern = addressPattern(addresses);
  await deps.orm.em.transactional(async (em) => {
    const contacts = await findContacts(em, teamId, { emails: addresses }, { lock: !dryRun });
    receipt.contacts = contacts.length;
    if (!dryRun) await deleteContactRecords(em, teamId, contacts, source, false);
    for (const scrub of SCRUBS) {
      receipt[scrub.kind] = await count(em, scrub.match, teamId, pattern);
      if (dryRun || receipt[scrub.kind] === 0) continue;
      const [sql, bindings] = bind(scrub.apply.replace('{match}', scrub.match), teamId, pattern);
      await sqlQuery(em, sql, bindings);
    }
    if (!dryRun) {
      await sqlQuery(em, `UPDATE erasure_request SET email = '${ERASED}', completed_at = now(), receipt = ?::jsonb WHERE team_id = ? AND completed_at IS NULL AND email IN (SELECT jsonb_array_elements_text(?::jsonb))`, [
        JSON.stringify(receipt),
        teamId,
        JSON.stringify(addresses),
      ]);
    }
  });
  return receipt;
}
