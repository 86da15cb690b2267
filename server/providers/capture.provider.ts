import type { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../db/ids.js';
import { sqlQuery } from '../db/query.js';
import { MimeThreads } from '../mail/mime-threads.js';
import { postlaneSignedDomainSetup } from './postlane-signed-domain.js';
import { type BatchOutcome, type DomainSetup, type EmailProvider, type OutboundMessage, ProviderError, type SendResult } from './provider.js';

const INSERT_CAPTURED = `
  INSERT INTO captured_message (id, region, message_id, envelope_from, envelope_to, subject, raw, created_at)
  SELECT id, region, message_id, envelope_from, envelope_to, subject, raw, created_at
    FROM jsonb_to_recordset(?::jsonb) AS r(id uuid, region text, message_id text, envelope_from text, envelope_to text[], subject text, raw text, created_at timestamptz)`;

/**
 * The embedded default: stores each message's MIME in Postgres instead of relaying it,
 * so a fresh install sends end to end without any outside account (`postlane outbox`).
 */
export class CaptureProvider implements EmailProvider {
  readonly type = 'capture';

  private readonly mime = new MimeThreads();

  constructor(
    readonly regions: readonly string[],
    private readonly orm: MikroORM,
    private readonly domainOptions: { selector: string; spfInclude: string | undefined },
  ) {}

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    const [outcome] = await this.sendBatch([message], signal);
    if (outcome instanceof ProviderError) throw outcome;
    return outcome!;
  }

  /** A whole batch in one INSERT: per-message inserts would make the store the ceiling of a broadcast. */
  async sendBatch(messages: readonly OutboundMessage[], _signal: AbortSignal): Promise<BatchOutcome[]> {
    const region = this.regions[0]!;
    const built = (await this.mime.build(messages)).map((mime) => ('error' in mime ? new ProviderError(mime.error, false) : mime));
    const createdAt = new Date().toISOString();
    const rows = messages.flatMap((message, at) => {
      const mime = built[at]!;
      if (mime instanceof ProviderError) return [];
      return [{ id: newId(), region, message_id: message.messageId, envelope_from: mime.envelope.from, envelope_to: mime.envelope.to, subject: message.subject, raw: mime.raw, created_at: createdAt }];
    });
    // One parameter, not values inlined into the SQL text by the ORM (escaping every raw message on the event loop).
    if (rows.length > 0) await sqlQuery(this.orm.em.fork(), INSERT_CAPTURED, [JSON.stringify(rows)], 'postlane_capture_messages');
    let stored = 0;
    return built.map((mime) => {
      if (mime instanceof ProviderError) return mime;
      return {
        providerMessageId: rows[stored++]!.id,
        recipients: mime.envelope.to.map((address) => ({ address, accepted: true, transient: false, response: '250 captured' })),
      };
    });
  }

  /** The same records and signing as an SMTP relay, so DNS can be rehearsed before mail leaves. */
  setUpDomain(domain: { name: string }): Promise<DomainSetup> {
    return postlaneSignedDomainSetup(domain.name, this.domainOptions);
  }

  async tearDownDomain(): Promise<void> {}

  async verify(): Promise<void> {}

  close(): Promise<void> {
    return this.mime.close();
  }
}
