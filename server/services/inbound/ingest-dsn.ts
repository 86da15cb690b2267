import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { Email, EmailRecipient, type IEmail } from '../../entities/index.js';
import { RECIPIENT_KINDS } from '../../entities/email-recipient.entity.js';
import { recordEmailEvent } from '../emails/record-email-event.js';
import { type Dsn, parseDsn } from './dsn.js';
import { firstArrival } from '../provider-reports/ingest-sns.js';
import { bounceData, recordProviderOutcome, SOFT_BOUNCE_EVENT } from '../provider-reports/record-provider-outcome.js';
import { invalidNotification } from '../provider-reports/sns.js';

/** What a report about no email of ours comes to. */
export const NO_MATCHING_EMAIL = 'no matching email';
/** What a report naming none of its email's recipients comes to: nothing is recorded (issue 33, 6). */
export const NO_MATCHING_RECIPIENT = 'no matching recipient';

/** The email a report is about, and the addresses of its recipients the report may speak for (lower case). */
export interface DsnScope {
  email: IEmail;
  recipients: Set<string>;
}

/** An email and its recipients of the given kinds (all by default), or null for no email. */
export async function emailScope(
  tx: EntityManager,
  email: IEmail | null,
  kinds: readonly (typeof RECIPIENT_KINDS)[number][] = RECIPIENT_KINDS,
): Promise<DsnScope | null> {
  if (!email) return null;
  const rows = await tx.find(EmailRecipient, { email: email.id, kind: { $in: [...kinds] } }, { fields: ['address'] });
  return { email, recipients: new Set(rows.map((r) => r.address.toLowerCase())) };
}

/** Our Message-IDs are `<email-id@sender-domain>`: the id finds the row, the whole value must match. */
async function findEmail(tx: EntityManager, messageId: string | null): Promise<IEmail | null> {
  const id = messageId?.trim().match(/^<([^@>]+)@[^>]+>$/)?.[1];
  return id && isUuid(id) ? tx.findOne(Email, { id: id.toLowerCase(), messageId: messageId.trim() }) : null;
}

/**
 * A bounce report from an SMTP relay's world (an MTA pipes it here): applied once, keyed by the
 * report's own Message-ID (or its hash), in one transaction, like an SNS notification. The email
 * is the one whose Message-ID the returned headers carry.
 */
export async function ingestDsn(deps: Deps, raw: string): Promise<string> {
  const dsn = parseDsn(raw);
  if (!dsn)
    throw invalidNotification(
      'The body is not a delivery status notification (multipart/report; report-type=delivery-status).',
    );
  // Authenticated as the operator's own MTA: the report may speak for every recipient of the email.
  return recordDsn(deps, raw, dsn, async (tx) => emailScope(tx, await findEmail(tx, dsn.originalMessageId)));
}

/**
 * Applies a parsed report to the email `find` names (nothing, when none), once per report: a
 * report that arrives again (the same Message-ID, or the same bytes without one), whether posted to
 * /ingest/dsn or delivered to a VERP return path, is a duplicate. Per recipient of the email:
 * `failed` with a 5.x.x status is a hard bounce (email.bounced and a suppression), other failures
 * are soft, `delayed` is email.delivery_delayed (its first recipient's reply and class as `delay`), and `delivered`/`relayed` is email.delivered.
 * Only the report's recipients within the scope `find` gives count (the email's recipients, or
 * the one a VERP token names): any other address gets no suppression, and a report naming none
 * of them records nothing at all (no event with text of the reporter's choosing).
 */
export async function recordDsn(
  deps: Deps,
  raw: string,
  dsn: Dsn,
  find: (tx: EntityManager) => Promise<DsnScope | null>,
): Promise<string> {
  const key = dsn.messageId ?? createHash('sha256').update(raw).digest('hex');
  return deps.orm.em.fork().transactional(async (tx) => {
    if (!(await firstArrival(tx, 'dsn', key, 'dsn'))) return 'duplicate';
    const scope = await find(tx);
    if (!scope) return NO_MATCHING_EMAIL;
    const { email } = scope;
    const recipients = dsn.recipients.filter((r) => scope.recipients.has(r.address.toLowerCase()));
    if (recipients.length === 0) return NO_MATCHING_RECIPIENT;
    const at = deps.clock();
    const failed = recipients.filter((r) => r.action === 'failed');
    const hard = failed.filter((r) => r.status.startsWith('5.'));
    const soft = failed.filter((r) => !r.status.startsWith('5.'));
    const classOf = (r: (typeof recipients)[number]) =>
      deps.classifyReply({ enhanced: r.status, text: r.diagnosticCode ?? '' }).class;
    // Beside SES's fields, the bounce class of its first recipient, as `message` is its first reply.
    const bounce = (type: string, list: typeof failed) => ({
      ...bounceData({
        bounceType: type,
        bounceSubType: 'General',
        bouncedRecipients: list.map((r) => ({
          emailAddress: r.address,
          status: r.status,
          diagnosticCode: r.diagnosticCode ?? undefined,
        })),
      }),
      class: classOf(list[0]!),
    });
    if (hard.length > 0)
      await recordProviderOutcome(
        deps,
        tx,
        email,
        'email.bounced',
        at,
        { bounce: bounce('Permanent', hard) },
        hard.map((r) => r.address),
      );
    if (soft.length > 0)
      await recordEmailEvent(deps, tx, email, SOFT_BOUNCE_EVENT, at, { bounce: bounce('Transient', soft) });
    const delayed = recipients.filter((r) => r.action === 'delayed');
    if (delayed.length > 0)
      await recordEmailEvent(deps, tx, email, 'email.delivery_delayed', at, {
        delay: { message: delayed[0]!.diagnosticCode ?? delayed[0]!.status, class: classOf(delayed[0]!) },
      });
    if (recipients.some((r) => r.action === 'delivered' || r.action === 'relayed'))
      await recordEmailEvent(deps, tx, email, 'email.delivered', at);
    return `${recipients.map((r) => r.action).join(', ')} reported`;
  });
}
