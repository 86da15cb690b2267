import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Team } from './team.entity.js';

const addresses = () => p.array().columnType('text[]');

/** What one check (SPF, DKIM or DMARC) concluded, as `mailauth` reports it, trimmed to what a reader needs. */
export interface AuthVerdict {
  /** `pass`, `fail`, `softfail`, `neutral`, `none`, `temperror`, `permerror` (and `policy` for DKIM). */
  result: string;
  /** The domain the verdict is about (SPF: the MAIL FROM or HELO domain; DKIM: the signing domain; DMARC: the From domain). */
  domain?: string;
  /** DKIM: the selector; DMARC: the published policy; SPF: the client IP checked. */
  detail?: string;
  /** Why, when the checker says (e.g. `body hash did not verify`). */
  comment?: string;
}

/** The three checks of a received message; DKIM has one verdict per signature (none when unsigned). */
export interface AuthVerdicts {
  spf: AuthVerdict;
  dkim: AuthVerdict[];
  dmarc: AuthVerdict;
}

/**
 * A message received by the inbound listener for one team: one row per team whose receiving
 * domains it was addressed to (a message for two teams is two rows, so neither sees the other's
 * copy or recipients). The raw bytes are kept whole and loaded only when asked for; a message
 * `mailparser` could not read keeps `parseError` and empty parsed fields, and is listed all the same.
 */
export const ReceivedEmail = defineEntity({
  name: 'ReceivedEmail',
  indexes: [
    { name: 'received_email_team_listing_idx', properties: ['team', 'createdAt', 'id'] },
    // Retention purges by age across teams.
    { name: 'received_email_created_idx', properties: ['createdAt'] },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    /** The receiving domain (lower-case) of the first recipient for this team. */
    domain: p.text(),
    /** Envelope sender (MAIL FROM); empty for the null sender `<>` of bounces. */
    envelopeFrom: p.text(),
    /** Envelope recipients (RCPT TO) of this team, lower-cased: Resend's `received_for`. */
    receivedFor: addresses(),
    /** The connecting client's IP and HELO name, as the SPF check used them. */
    peerIp: p.text(),
    helo: p.text(),
    /** The parsed header fields; empty strings and lists when the message could not be parsed. */
    messageId: p.text(),
    subject: p.text(),
    from: p.text(),
    to: addresses(),
    cc: addresses(),
    bcc: addresses(),
    replyTo: addresses(),
    /** Header fields by lower-case name; a repeated field's values joined by a newline. */
    headers: p.json<Record<string, string>>().defaultRaw(`'{}'`),
    text: p.text().nullable(),
    /** The HTML as received, with `cid:` references (the read API inlines them on request). */
    html: p.text().nullable(),
    /** The message exactly as the client sent it over SMTP. */
    raw: p.blob().lazy(),
    size: p.integer(),
    /** Why the message could not be parsed; null when it was. */
    parseError: p.text().nullable(),
    spf: p.json<AuthVerdict>(),
    dkim: p.json<AuthVerdict[]>(),
    dmarc: p.json<AuthVerdict>(),
  },
});

export interface IReceivedEmail extends InferEntity<typeof ReceivedEmail> {}

/** One attachment (or inline part) of a received message, its bytes decoded. */
export const ReceivedAttachment = defineEntity({
  name: 'ReceivedAttachment',
  properties: {
    ...baseProperties,
    email: () => p.manyToOne(ReceivedEmail).deleteRule('cascade').index(),
    position: p.integer(),
    filename: p.text().nullable(),
    contentType: p.text(),
    /** `inline` or `attachment`, as the part declares it (null when it does not). */
    contentDisposition: p.text().nullable(),
    /** Without the angle brackets: what `cid:` references in the HTML name. */
    contentId: p.text().nullable(),
    size: p.integer(),
    content: p.blob().lazy(),
  },
});

export interface IReceivedAttachment extends InferEntity<typeof ReceivedAttachment> {}
