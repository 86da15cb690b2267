import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { IEmail } from '../../entities/index.js';
import { parseMailbox } from '../../mail/address.js';
import { recordEmailEvent } from '../emails/record-email-event.js';
import { addSuppressions } from '../suppressions/add-suppression.js';
import { addressHash } from '../suppressions/address-hash.js';

/** A bounce as a provider reports it (SES's shape; a DSN is read into it too). */
export interface BounceReport {
  bounceType?: string;
  bounceSubType?: string;
  bouncedRecipients?: { emailAddress?: string; diagnosticCode?: string; status?: string }[];
}

/** A transient or undetermined bounce: kept in the email's history, never delivered (the spec's email.bounced is a hard bounce). */
export const SOFT_BOUNCE_EVENT = 'email.soft_bounced';

/** `data.bounce` as Resend sends it. */
export function bounceData(bounce: BounceReport) {
  const diagnosticCode = (bounce.bouncedRecipients ?? [])
    .map((r) => r.diagnosticCode)
    .filter((code): code is string => !!code);
  return {
    type: bounce.bounceType ?? 'Undetermined',
    subType: bounce.bounceSubType ?? 'General',
    message:
      diagnosticCode[0] ??
      `The message bounced (${bounce.bounceType ?? 'Undetermined'}, ${bounce.bounceSubType ?? 'General'}).`,
    diagnosticCode,
  };
}

/** Stored addresses were accepted by the strict parser, so they parse again. */
const addressOf = (formatted: string) => {
  const mailbox = parseMailbox(formatted);
  return typeof mailbox === 'string' ? formatted : mailbox.address;
};

const ORIGIN_OF = { 'email.bounced': 'bounce', 'email.complained': 'complaint' } as const;

/**
 * A hard bounce or a complaint, from SNS or a DSN: one outcome, one event. The email's event is
 * recorded and the recipients the report names suppressed (only the email's own: a notification
 * cannot suppress an address the email was not sent to), unless the email already has that event
 * and every one of them is suppressed already: then the report repeats a known outcome (another
 * notification id, a second DSN) and is not recorded again, so nothing is announced twice. The
 * email's row lock makes two such reports arriving at once take turns.
 */
export async function recordProviderOutcome(
  deps: Deps,
  tx: EntityManager,
  email: IEmail,
  type: keyof typeof ORIGIN_OF,
  at: Date,
  extra: Record<string, unknown>,
  addresses: readonly string[],
): Promise<string> {
  const own = new Set([...email.to, ...email.cc, ...email.bcc].map((formatted) => addressOf(formatted).toLowerCase()));
  const emails = [...new Set(addresses.map((address) => address.toLowerCase()).filter((address) => own.has(address)))];
  // Locked first, on its own: a statement that waited for the lock would still read the other report's writes as not there.
  await sqlQuery(tx, `SELECT 1 FROM email WHERE id = ? FOR NO KEY UPDATE`, [email.id]);
  const [{ known }] = (await sqlQuery<{ known: boolean }>(
    tx,
    `SELECT EXISTS (SELECT 1 FROM event WHERE email_id = ? AND type = ?)
            AND (SELECT count(*) FROM suppression WHERE team_id = ? AND address_hash = ANY(ARRAY(SELECT decode(jsonb_array_elements_text(?::jsonb), 'hex')))) = ? AS known`,
    [
      email.id,
      type,
      email.team.id,
      JSON.stringify(emails.map((address) => addressHash(deps.secrets, address).toString('hex'))),
      emails.length,
    ],
  )) as [{ known: boolean }];
  if (known) return `${type} repeated`;
  await recordEmailEvent(deps, tx, email, type, at, extra);
  if (emails.length > 0)
    await addSuppressions(deps, tx, {
      teamId: email.team.id,
      emails,
      origin: ORIGIN_OF[type],
      source: null,
      sourceId: email.id,
    });
  return type;
}
