import type { OutboundMessage } from '../../mail/outbound-message.js';
import type { EmailFacts, IEmail } from '../../entities/index.js';

/** A recipient a claimed email still owes a delivery to. */
export interface OwedRecipient {
  id: string;
  address: string;
  response: string | null;
}

/**
 * A claimed email as the drain reads it: plain values, not a managed entity (mapping a batch into
 * the identity map, and the flush that compared them all at commit, cost more than sending it).
 */
export interface ClaimedEmail
  extends
    EmailFacts,
    Pick<IEmail, 'cc' | 'bcc' | 'replyTo' | 'html' | 'text' | 'headers' | 'attempts' | 'sentAt' | 'lastError'> {
  owed: OwedRecipient[];
  attachments: OutboundMessage['attachments'];
  /** The message as submitted over SMTP, or null: see OutboundMessage.raw. */
  rawMime: Buffer | null;
}
