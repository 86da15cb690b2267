import type { Deps } from '../../deps.js';
import type { AuthVerdicts } from '../../entities/index.js';
import type { ReceivedEnvelope } from './envelope.js';
import type { ParsedMessage } from './parse-received.js';
import type { StoredReceivedEmail } from './received-email-writer.js';
import { normalizeRecipient } from './receiving-domains.js';

export interface StoreReceivedEmailInput {
  envelope: ReceivedEnvelope;
  raw: Buffer;
  verdicts: AuthVerdicts;
  /** The parsed message, when the caller has it already (the listener parses while DNS answers). */
  parsed?: ParsedMessage;
}

/**
 * Keeps a message the listener accepted: one row per team it was addressed to (with that team's
 * recipients only), raw bytes, parsed fields and attachments, and its `email.received` event, in
 * one statement (ReceivedEmailWriter). The listener answers 250 only after it commits, so an
 * accepted message is never lost; a recipient whose domain stopped receiving since RCPT TO is
 * dropped (an empty result: nothing was kept).
 */
export async function storeReceivedEmail(
  deps: Pick<Deps, 'clock' | 'mailWork' | 'receivedEmails'>,
  input: StoreReceivedEmailInput,
): Promise<StoredReceivedEmail[]> {
  const parsed = input.parsed ?? (await deps.mailWork.parse(input.raw));
  return deps.receivedEmails.write({
    recipients: [...new Set(input.envelope.recipients.map(normalizeRecipient))],
    envelope: input.envelope,
    raw: input.raw,
    verdicts: input.verdicts,
    parsed,
    createdAt: deps.clock(),
  });
}
