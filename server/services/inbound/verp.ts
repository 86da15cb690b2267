import type { Config } from '../../../config/index.js';
import type { Deps } from '../../deps.js';
import { Email } from '../../entities/index.js';
import { bounceToken, ReturnPaths } from './return-path.js';
import { parseDsn } from './dsn.js';
import { NO_MATCHING_EMAIL, recordDsn } from './ingest-dsn.js';

/**
 * Whether the inbound listener takes mail for this recipient as a bounce: a return path of the
 * bounce domain in its form (`bounces+<token>@…`). Decided at RCPT TO from the form alone; whether
 * the token is ours is checked once the message is in, and a forged one is dropped then.
 */
export function isBounceAddress(config: Pick<Config, 'POSTLANE_BOUNCE_DOMAIN'>, address: string): boolean {
  return config.POSTLANE_BOUNCE_DOMAIN !== undefined && bounceToken(config.POSTLANE_BOUNCE_DOMAIN, address) !== null;
}

/**
 * A message the listener accepted for a VERP return path: the email its token names gets the
 * report's verdicts through the same service as POST /ingest/dsn (events, suppressions, webhooks,
 * once per report). The sender was already told 250, so what cannot be applied (a forged token,
 * something other than a delivery status report, an email no longer kept) is dropped with a log
 * line and counted, never thrown; only a database failure throws, for the listener to answer 4xx
 * and the sending MTA to try again.
 */
export async function ingestBounceMessage(deps: Deps, rcpt: string, raw: Buffer | string): Promise<string> {
  const emailId = ReturnPaths.from(deps)?.emailOf(rcpt) ?? null;
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  const dsn = emailId ? parseDsn(text) : null;
  const outcome = !emailId
    ? 'forged or foreign return path'
    : !dsn
      ? 'not a delivery status notification'
      : await recordDsn(deps, text, dsn, (tx) => tx.findOne(Email, { id: emailId }));
  const kind = outcome === 'duplicate' ? 'duplicate' : !dsn || outcome === NO_MATCHING_EMAIL ? 'dropped' : 'applied';
  deps.metrics.ingestedNotifications.inc({ source: 'verp', outcome: kind });
  // The email's id, never the addresses: the report names recipients.
  if (kind === 'dropped') deps.logger.warn({ emailId, outcome }, 'bounce message dropped');
  else deps.logger.info({ emailId, outcome }, 'bounce message ingested');
  return outcome;
}
