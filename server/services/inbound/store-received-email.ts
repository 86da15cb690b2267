import type { Deps } from '../../deps.js';
import { type AuthVerdicts, type IReceivedEmail, ReceivedAttachment, ReceivedEmail } from '../../entities/index.js';
import { parseReceived } from './parse-received.js';
import { findReceivingDomains, normalizeRecipient } from './receiving-domains.js';
import { domainOfAddress } from '../domains/domain-name.js';

/** What the SMTP session knew about a message. */
export interface ReceivedEnvelope {
  /** MAIL FROM; empty for the null sender. */
  mailFrom: string;
  /** Every RCPT TO the listener accepted. */
  recipients: readonly string[];
  peerIp: string;
  helo: string;
}

export interface StoreReceivedEmailInput {
  envelope: ReceivedEnvelope;
  raw: Buffer;
  verdicts: AuthVerdicts;
}

export interface StoredReceivedEmail {
  id: string;
  teamId: string;
}

/**
 * Keeps a message the listener accepted: one row per team it was addressed to (with that team's
 * recipients only), raw bytes, parsed fields and attachments, in one transaction. The listener
 * answers 250 only after this commits, so an accepted message is never lost; a recipient whose
 * domain stopped receiving since RCPT TO is dropped (an empty result: nothing was kept).
 */
export async function storeReceivedEmail(deps: Pick<Deps, 'orm' | 'clock'>, input: StoreReceivedEmailInput): Promise<StoredReceivedEmail[]> {
  const recipients = [...new Set(input.envelope.recipients.map(normalizeRecipient))];
  const parsed = await parseReceived(input.raw);
  const createdAt = deps.clock();
  return deps.orm.em.fork().transactional(async (tx) => {
    const domains = await findReceivingDomains(tx, recipients.map(domainOfAddress));
    const teams = new Map<string, string[]>();
    for (const { teamId, name } of domains) {
      const mine = recipients.filter((address) => domainOfAddress(address) === name);
      teams.set(teamId, [...(teams.get(teamId) ?? []), ...mine]);
    }
    const stored: { email: IReceivedEmail; teamId: string }[] = [];
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
      parsed.attachments.forEach((part, position) =>
        tx.create(ReceivedAttachment, { email, createdAt, position, ...part, size: part.content.length }));
      stored.push({ email, teamId });
    }
    await tx.flush();
    // Ids are assigned at flush.
    return stored.map(({ email, teamId }) => ({ id: email.id, teamId }));
  });
}
