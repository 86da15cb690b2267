import type { Deps } from '../../deps.js';
import { domainOfAddress } from '../domains/domain-name.js';
import { dkimSignaturesExceeded, headerLimitExceeded, measureMessage, mimePartsExceeded } from './message-limits.js';
import type { ReceivingDomainCache } from './receiving-domains.js';
import type { ReceivedEnvelope } from './envelope.js';
import { storeReceivedEmail } from './store-received-email.js';
import { ingestBounceMessage, isBounceAddress } from './verp.js';

/** What became of a message: accepted (with the id it was stored under, if any received mail was kept), or refused for good. */
export type MessageVerdict = { accepted: true; storedId: string | null } | { accepted: false };

/** Whether mail to this address is ours to take: a VERP return path, or a domain that receives. */
export async function acceptsRecipient(
  deps: Pick<Deps, 'config' | 'orm' | 'clock'>,
  domains: ReceivingDomainCache,
  address: string,
): Promise<boolean> {
  if (isBounceAddress(deps.config, address)) return true;
  return domains.receives(deps.orm.em.fork(), domainOfAddress(address), deps.clock().getTime());
}

/**
 * The decision for one message the listener read whole: copies to VERP return paths are bounce
 * reports of our own mail, recorded as such and never stored as received mail; the rest is
 * authenticated, parsed and stored for the domains that still receive. Everything is written
 * before this returns, so the transport answers 250 only for what is durable.
 */
export async function acceptMessage(deps: Deps, raw: Buffer, envelope: ReceivedEnvelope): Promise<MessageVerdict> {
  const bounces = envelope.recipients.filter((address) => isBounceAddress(deps.config, address));
  for (const address of bounces) await ingestBounceMessage(deps, address, raw);
  const received = { ...envelope, recipients: envelope.recipients.filter((address) => !bounces.includes(address)) };
  if (received.recipients.length === 0) return { accepted: true, storedId: null };
  // Bounded before any parsing: the authentication parser is quadratic in folded header lines, each
  // DKIM signature costs a hash of the body, and the MIME parser never settles from ~1,000 parts.
  // Mail over a limit is still kept, raw, with `parse_error` set and authentication `temperror`.
  const shape = measureMessage(raw, deps.config);
  const overHeaders = headerLimitExceeded(shape, deps.config);
  const skipAuth = overHeaders ?? dkimSignaturesExceeded(shape, deps.config);
  const skipParse = overHeaders ?? mimePartsExceeded(shape, deps.config);
  // Within the limits, both run in one task of the mail workers, under a deadline (issue 33: what the
  // limits miss may be slow, never stalls the event loop, and always ends).
  const { verdicts, parsed } = await deps.mailWork.read(raw, received, { authenticate: skipAuth, parse: skipParse });
  const stored = await storeReceivedEmail(deps, { envelope: received, raw, verdicts, parsed });
  if (stored.length > 0) return { accepted: true, storedId: stored[0]!.id };
  // Every recipient's domain stopped receiving since RCPT TO: nothing was kept, so nothing is
  // accepted (bounces recorded above are copies if sent again).
  return bounces.length > 0 ? { accepted: true, storedId: null } : { accepted: false };
}
