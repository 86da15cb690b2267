import type { Config } from '../../../config/index.js';
import type { Deps } from '../../deps.js';
import { Email, EmailRecipient } from '../../entities/index.js';
import { bounceToken, type ReturnPathOwner, ReturnPaths } from './return-path.js';
import { parseDsn } from './dsn.js';
import { type DsnScope, emailScope, NO_MATCHING_EMAIL, NO_MATCHING_RECIPIENT, recordDsn } from './ingest-dsn.js';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Whether the inbound listener takes mail for this recipient as a bounce: a return path of the
 * bounce domain in its form (`bounces+<token>@…`). Decided at RCPT TO from the form alone; whether
 * the token is ours is checked once the message is in, and a forged one is dropped then.
 */
export function isBounceAddress(config: Pick<Config, 'POSTLANE_BOUNCE_DOMAIN'>, address: string): boolean {
  return config.POSTLANE_BOUNCE_DOMAIN !== undefined && bounceToken(config.POSTLANE_BOUNCE_DOMAIN, address) !== null;
}

/**
 * Whom a report to a return path may speak for. A per-recipient token: its recipient alone. A
 * per-email token of before (issue 33, 6): the email's visible recipients (To and Cc), never a Bcc,
 * whose address a co-recipient could only guess and should not be able to bounce.
 */
async function scopeOf(tx: EntityManager, owner: ReturnPathOwner): Promise<DsnScope | null> {
  if ('emailId' in owner) return emailScope(tx, await tx.findOne(Email, { id: owner.emailId }), ['to', 'cc']);
  const recipient = await tx.findOne(EmailRecipient, { id: owner.recipientId }, { fields: ['address', 'email'] });
  const email = recipient ? await tx.findOne(Email, { id: recipient.email.id }) : null;
  return email && recipient ? { email, recipients: new Set([recipient.address.toLowerCase()]) } : null;
}

/**
 * A message the listener accepted for a VERP return path: the recipient its token names gets the
 * report's verdicts through the same service as POST /ingest/dsn (events, suppressions, webhooks,
 * once per report). The sender was already told 250, so what cannot be applied (a forged token,
 * something other than a delivery status report, an email no longer kept) is dropped with a log
 * line and counted, never thrown; only a database failure throws, for the listener to answer 4xx
 * and the sending MTA to try again.
 */
export async function ingestBounceMessage(deps: Deps, rcpt: string, raw: Buffer | string): Promise<string> {
  // The token first: a forged return path costs an HMAC, never a decode or a parse of the message.
  const owner = ReturnPaths.from(deps)?.ownerOf(rcpt) ?? null;
  const text = owner ? (typeof raw === 'string' ? raw : raw.toString('utf8')) : null;
  const dsn = text === null ? null : parseDsn(text);
  const outcome =
    text === null
      ? 'forged or foreign return path'
      : !dsn
        ? 'not a delivery status notification'
        : await recordDsn(deps, text, dsn, (tx) => scopeOf(tx, owner!));
  const kind =
    outcome === 'duplicate'
      ? 'duplicate'
      : !dsn || outcome === NO_MATCHING_EMAIL || outcome === NO_MATCHING_RECIPIENT
        ? 'dropped'
        : 'applied';
  deps.metrics.ingestedNotifications.inc({ source: 'verp', outcome: kind });
  // Ids, never the addresses: the report names recipients.
  if (kind === 'dropped') deps.logger.warn({ ...owner, outcome }, 'bounce message dropped');
  else deps.logger.info({ ...owner, outcome }, 'bounce message ingested');
  return outcome;
}
