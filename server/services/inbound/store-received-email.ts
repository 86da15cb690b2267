import type { Deps } from '../../deps.js';
import {
  type AuthVerdicts,
  type IReceivedAttachment,
  type IReceivedEmail,
  ReceivedAttachment,
  ReceivedEmail,
} from '../../entities/index.js';
import type { ReceivedEnvelope } from './envelope.js';
import type { ParsedMessage } from './parse-received.js';
import { findReceivingDomains, normalizeRecipient } from './receiving-domains.js';
import { domainOfAddress } from '../domains/domain-name.js';
import { emitEvent } from '../events/emit-event.js';

export interface StoreReceivedEmailInput {
  envelope: ReceivedEnvelope;
  raw: Buffer;
  verdicts: AuthVerdicts;
  /** The parsed message, when the caller has it already (the listener parses while DNS answers). */
  parsed?: ParsedMessage;
}

export interface StoredReceivedEmail {
  id: string;
  teamId: string;
}

/** Resend's `email.received` data: metadata only, the body and attachments are read through the API. */
function receivedEventData(email: IReceivedEmail, attachments: readonly IReceivedAttachment[]) {
  return {
    email_id: email.id,
    created_at: email.createdAt.toISOString(),
    from: email.from,
    to: email.to,
    bcc: email.bcc,
    cc: email.cc,
    received_for: email.receivedFor,
    message_id: email.messageId,
    subject: email.subject,
    attachments: attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      content_type: a.contentType,
      content_disposition: a.contentDisposition,
      content_id: a.contentId,
    })),
  };
}

/**
 * Keeps a message the listener accepted: one row per team it was addressed to (with that team's
 * recipients only), raw bytes, parsed fields and attachments, and its `email.received` event, in
 * one transaction. The listener answers 250 only after this commits, so an accepted message is
 * never lost; a recipient whose domain stopped receiving since RCPT TO is dropped (an empty
 * result: nothing was kept).
 */
export async function storeReceivedEmail(
  deps: Pick<Deps, 'orm' | 'clock' | 'mailWork'>,
  input: StoreReceivedEmailInput,
): Promise<StoredReceivedEmail[]> {
  const recipients = [...new Set(input.envelope.recipients.map(normalizeRecipient))];
  const parsed = input.parsed ?? (await deps.mailWork.parse(input.raw));
  const createdAt = deps.clock();
  return deps.orm.em.fork().transactional(async (tx) => {
    const domains = await findReceivingDomains(tx, recipients.map(domainOfAddress));
    const teams = new Map<string, string[]>();
    for (const { teamId, name } of domains) {
      const mine = recipients.filter((address) => domainOfAddress(address) === name);
      teams.set(teamId, [...(teams.get(teamId) ?? []), ...mine]);
    }
    const stored: { email: IReceivedEmail; attachments: IReceivedAttachment[]; teamId: string }[] = [];
    for (const [teamId, receivedFor] of teams) {
      const email = tx.create(ReceivedEmail, {
        team: teamId,
        createdAt,
        domain: domainOfAddress(receivedFor[0]!),
        envelopeFrom: input.envelope.mailFrom,
        receivedFor,
        peerIp: input.envelope.peerIp,
        helo: input.envelope.helo,
        messageId: parsed.messageId,
        subject: parsed.subject,
        from: parsed.from,
        to: parsed.to,
        cc: parsed.cc,
        bcc: parsed.bcc,
        replyTo: parsed.replyTo,
        headers: parsed.headers,
        text: parsed.text,
        html: parsed.html,
        raw: input.raw,
        size: input.raw.length,
        parseError: parsed.parseError,
        spf: input.verdicts.spf,
        dkim: input.verdicts.dkim,
        dmarc: input.verdicts.dmarc,
      });
      const attachments = parsed.attachments.map((part, position) =>
        tx.create(ReceivedAttachment, { email, createdAt, position, ...part, size: part.content.length }),
      );
      stored.push({ email, attachments, teamId });
    }
    // Ids are assigned at flush; the events need them.
    await tx.flush();
    for (const { email, attachments, teamId } of stored)
      await emitEvent(tx, { teamId, type: 'email.received', data: receivedEventData(email, attachments), createdAt });
    return stored.map(({ email, teamId }) => ({ id: email.id, teamId }));
  });
}
