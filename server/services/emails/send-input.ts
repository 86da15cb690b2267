import type { Mailbox } from '../../mail/address.js';
import type { IdempotencyRecord } from '../outbox/queued-email-writer.js';

/** What a send asks for, whichever way it arrives (the API, a batch, a broadcast). */
export interface SendEmailInput {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  /** Null only on a send with a template, whose subject then fills it. */
  subject: string | null;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: { filename: string; contentType: string | null; content: string }[];
  tags: { name: string; value: string }[];
  scheduledAt: Date | null;
  topicId: string | null;
  template: { id: string; variables: Record<string, string | number> } | null;
  /** A message submitted over SMTP, sent as it is: the fields above are what the API shows of it. */
  rawMime?: Buffer;
}

/** An idempotent request's key, not stored yet. */
export type IdempotencyClaim = Omit<IdempotencyRecord, 'response'>;

/** The key a send stores with its emails, and the answer a repeat gets, made from the send's result before it is written. */
export type IdempotentAnswer<T> = IdempotencyClaim & { present: (result: T) => unknown };

/** An email as it will be written: its template rendered, its subject settled. */
export type AdmittedEmail = SendEmailInput & { subject: string };
