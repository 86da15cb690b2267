import type { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../../db/ids.js';
import { SharedQuery } from '../../db/shared-query.js';
import type { AuthVerdicts } from '../../entities/index.js';
import type { ReceivedEnvelope } from './envelope.js';
import { LARGE_MESSAGE_BYTES } from './message-limits.js';
import type { ParsedMessage } from './parse-received.js';
import { findReceivingDomains } from './receiving-domains.js';
import { domainOfAddress } from '../domains/domain-name.js';
import { type EventInput, emitEvents } from '../events/emit-event.js';

/** One stored row of a received message: a team it was addressed to. */
export interface StoredReceivedEmail {
  id: string;
  teamId: string;
}

/** A message waiting for the next shared statement. */
export interface ReceivedMessage {
  recipients: string[];
  envelope: ReceivedEnvelope;
  raw: Buffer;
  verdicts: AuthVerdicts;
  parsed: ParsedMessage;
  createdAt: Date;
}

/** The bytes of a message and its attachments: they travel in the statement as one binary parameter, apart from the JSON. */
const bytesOf = (w: ReceivedMessage) =>
  w.raw.length + w.parsed.attachments.reduce((sum, part) => sum + part.content.length, 0);

/**
 * The received rows and attachments of one statement. Their bytes lie in one `bytea` parameter,
 * each row naming its slice of it (`at` counts from 0): bound, not inlined into the SQL text, and
 * sent by the driver as they are, neither escaped nor encoded.
 */
const INSERT_RECEIVED = `
  bytes AS (SELECT ?::bytea AS b
  ), received AS (
    INSERT INTO received_email (id, created_at, team_id, domain, envelope_from, received_for, peer_ip, helo, message_id, subject,
                                "from", "to", cc, bcc, reply_to, headers, text, html, raw, size, parse_error, spf, dkim, dmarc)
    SELECT r.id, r.created_at, r.team_id, r.domain, r.envelope_from, r.received_for, r.peer_ip, r.helo, r.message_id, r.subject,
           r."from", r."to", r.cc, r.bcc, r.reply_to, r.headers, r.text, r.html, substring(bytes.b FROM r.at + 1 FOR r.size), r.size,
           r.parse_error, r.spf, r.dkim, r.dmarc
      FROM bytes, jsonb_to_recordset(?::jsonb) AS r(
        id uuid, created_at timestamptz, team_id uuid, domain text, envelope_from text, received_for text[], peer_ip text, helo text,
        message_id text, subject text, "from" text, "to" text[], cc text[], bcc text[], reply_to text[], headers jsonb, text text,
        html text, at int, size int, parse_error text, spf jsonb, dkim jsonb, dmarc jsonb)
  ), received_attachments AS (
    INSERT INTO received_attachment (id, created_at, email_id, position, filename, content_type, content_disposition, content_id, size, content)
    SELECT a.id, a.created_at, a.email_id, a.position, a.filename, a.content_type, a.content_disposition, a.content_id, a.size,
           substring(bytes.b FROM a.at + 1 FOR a.size)
      FROM bytes, jsonb_to_recordset(?::jsonb) AS a(
        id uuid, created_at timestamptz, email_id uuid, position int, filename text, content_type text, content_disposition text,
        content_id text, at int, size int)
  )`;

/**
 * Group commit for received mail. A write starts at once while fewer than `maxInFlight` are
 * running; messages stored meanwhile (by other sessions) share the next transaction, up to
 * `maxBatchBytes` (a larger message goes alone): one look-up of the receiving domains, then one
 * statement with every row, attachment, `email.received` event and webhook delivery, and one
 * commit, so the commit rate of the database is not the listener's. Each message's promise settles
 * after that commit. If a shared transaction fails on a row's data, its messages are written one
 * by one, so only a message that fails on its own fails its session. Messages of `LARGE_MESSAGE_BYTES` or
 * more are written in a lane of their own, one transaction at a time: a flood of large messages
 * (anyone may send them) takes its turns there, and mail of a few KB never waits behind it.
 */
export class ReceivedEmailWriter {
  private readonly small: SharedQuery<ReceivedMessage, StoredReceivedEmail[]>;
  private readonly large: SharedQuery<ReceivedMessage, StoredReceivedEmail[]>;

  constructor(
    private readonly orm: MikroORM,
    maxInFlight = 2,
    maxBatchBytes = 8 * 1024 * 1024,
  ) {
    const lane = (inFlight: number) =>
      new SharedQuery(
        orm,
        (messages: readonly ReceivedMessage[]) => this.store(messages),
        inFlight,
        Number.POSITIVE_INFINITY,
        {
          weight: { of: bytesOf, max: maxBatchBytes },
          rowErrorsAlone: true,
        },
      );
    this.small = lane(maxInFlight);
    this.large = lane(1);
  }

  write(message: ReceivedMessage): Promise<StoredReceivedEmail[]> {
    return (bytesOf(message) < LARGE_MESSAGE_BYTES ? this.small : this.large).load(message);
  }

  /** What was stored of each message, in order: nothing for one whose every domain stopped receiving. */
  private store(messages: readonly ReceivedMessage[]): Promise<StoredReceivedEmail[][]> {
    return this.orm.em.fork().transactional(async (tx) => {
      const domains = await findReceivingDomains(
        tx,
        messages.flatMap((m) => m.recipients.map(domainOfAddress)),
      );
      const statement = new ReceivedStatement();
      const stored = messages.map((message) => statement.add(message, domains));
      if (statement.events.length > 0) await emitEvents(tx, statement.events, statement.alongside());
      return stored;
    });
  }
}

/** The rows of one shared statement, gathered message by message. */
class ReceivedStatement {
  readonly events: EventInput[] = [];
  private readonly emails: Record<string, unknown>[] = [];
  private readonly attachments: Record<string, unknown>[] = [];
  private readonly bytes: Buffer[] = [];
  private length = 0;

  /** One row per team that receives for some of the message's recipients, with that team's recipients. */
  add(message: ReceivedMessage, domains: readonly { teamId: string; name: string }[]): StoredReceivedEmail[] {
    const teams = new Map<string, string[]>();
    for (const { teamId, name } of domains) {
      const mine = message.recipients.filter((address) => domainOfAddress(address) === name);
      if (mine.length > 0) teams.set(teamId, [...(teams.get(teamId) ?? []), ...mine]);
    }
    if (teams.size === 0) return [];
    const { envelope, parsed, verdicts, createdAt } = message;
    const at = this.append(message.raw);
    const parts = parsed.attachments.map((part) => ({ part, at: this.append(part.content) }));
    const created = createdAt.toISOString();
    return [...teams].map(([teamId, receivedFor]) => {
      const id = newId();
      this.emails.push({
        id,
        created_at: created,
        team_id: teamId,
        domain: domainOfAddress(receivedFor[0]!),
        envelope_from: envelope.mailFrom,
        received_for: receivedFor,
        peer_ip: envelope.peerIp,
        helo: envelope.helo,
        message_id: parsed.messageId,
        subject: parsed.subject,
        from: parsed.from,
        to: parsed.to,
        cc: parsed.cc,
        bcc: parsed.bcc,
        reply_to: parsed.replyTo,
        headers: parsed.headers,
        text: parsed.text,
        html: parsed.html,
        at,
        size: message.raw.length,
        parse_error: parsed.parseError,
        spf: verdicts.spf,
        dkim: verdicts.dkim,
        dmarc: verdicts.dmarc,
      });
      const attachments = parts.map(({ part, at: partAt }, position) => {
        const row = {
          id: newId(),
          created_at: created,
          email_id: id,
          position,
          filename: part.filename,
          content_type: part.contentType,
          content_disposition: part.contentDisposition,
          content_id: part.contentId,
          at: partAt,
          size: part.content.length,
        };
        this.attachments.push(row);
        return row;
      });
      // Resend's `email.received` data: metadata only, the body and attachments are read through the API.
      this.events.push({
        teamId,
        type: 'email.received',
        createdAt,
        data: {
          email_id: id,
          created_at: created,
          from: parsed.from,
          to: parsed.to,
          bcc: parsed.bcc,
          cc: parsed.cc,
          received_for: receivedFor,
          message_id: parsed.messageId,
          subject: parsed.subject,
          attachments: attachments.map((a) => ({
            id: a.id,
            filename: a.filename,
            content_type: a.content_type,
            content_disposition: a.content_disposition,
            content_id: a.content_id,
          })),
        },
      });
      return { id, teamId };
    });
  }

  /** The rows' write, for emitEvents to run in its statement. */
  alongside() {
    return {
      ctes: INSERT_RECEIVED,
      bindings: [Buffer.concat(this.bytes, this.length), JSON.stringify(this.emails), JSON.stringify(this.attachments)],
    };
  }

  /** Where these bytes start in the statement's bytes. */
  private append(bytes: Uint8Array): number {
    const at = this.length;
    this.bytes.push(bytes as Buffer);
    this.length += bytes.length;
    return at;
  }
}
