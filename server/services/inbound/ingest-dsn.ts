import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';
import { recordEmailEvent } from '../emails/record-email-event.js';
import { type Dsn, parseDsn } from './dsn.js';
import { firstArrival } from '../provider-reports/ingest-sns.js';
import { bounceData, recordProviderOutcome, SOFT_BOUNCE_EVENT } from '../provider-reports/record-provider-outcome.js';
import { invalidNotification } from '../provider-reports/sns.js';

/** What a report about no email of ours comes to. */
export const NO_MATCHING_EMAIL = 'no matching email';

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
  return recordDsn(deps, raw, dsn, (tx) => findEmail(tx, dsn.originalMessageId));
}

/**
 * Applies a parsed report to the email `find` names (nothing, when none), once per report: a
 * report that arrives again (the same Message-ID, or the same bytes without one), whether posted to
 * /ingest/dsn or delivered to a VERP return path, is a duplicate. Per recipient of the email:
 * `failed` with a 5.x.x status is a hard bounce (email.bounced and a suppression), other failures
 * are soft, `delayed` is email.delivery_delayed, and `delivered`/`relayed` is email.delivered.
 */
export async function recordDsn(
  deps: Deps,
  raw: string,
  dsn: Dsn,
  find: (tx: EntityManager) => Promise<IEmail | null>,
): Promise<string> {
  const key = dsn.messageId ?? createHash('sha256').update(raw).digest('hex');
  return deps.orm.em.fork().transactional(async (tx) => {
    if (!(await firstArrival(tx, 'dsn', key, 'dsn'))) return 'duplicate';
    const email = await find(tx);
    if (!email) return NO_MATCHING_EMAIL;
    const at = deps.clock();
    const failed = dsn.recipients.filter((r) => r.action === 'failed');
    const hard = failed.filter((r) => r.status.startsWith('5.'));
    const soft = failed.filter((r) => !r.status.startsWith('5.'));
    const bounce = (type: string, list: typeof failed) =>
      bounceData({
        bounceType: type,
        bounceSubType: 'General',
        bouncedRecipients: list.map((r) => ({
          emailAddress: r.address,
          status: r.status,
          diagnosticCode: r.diagnosticCode ?? undefined,
        })),
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
    if (dsn.recipients.some((r) => r.action === 'delayed'))
      await recordEmailEvent(deps, tx, email, 'email.delivery_delayed', at);
    if (dsn.recipients.some((r) => r.action === 'delivered' || r.action === 'relayed'))
      await recordEmailEvent(deps, tx, email, 'email.delivered', at);
    return `${dsn.recipients.map((r) => r.action).join(', ') || 'no recipients'} reported`;
  });
}
