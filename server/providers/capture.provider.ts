import type { OutboundMessage } from '../mail/outbound-message.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../db/ids.js';
import { sqlQuery } from '../db/query.js';
import { envelopesOf } from '../mail/mime.js';
import { MimeThreads } from '../mail/mime-threads.js';
import { postlaneSignedDomainSetup, spfRecordValue } from './postlane-signed-domain.js';
import {
  type BatchOutcome,
  type DomainSetup,
  type EmailProvider,
  type OnOutcome,
  ProviderError,
  type SendResult,
} from './provider.js';

const INSERT_CAPTURED = `
  INSERT INTO captured_message (id, region, message_id, envelope_from, envelope_to, subject, raw, created_at)
  SELECT id, region, message_id, envelope_from, envelope_to, subject, raw, created_at
    FROM jsonb_to_recordset(?::jsonb) AS r(id uuid, region text, message_id text, envelope_from text, envelope_to text[], subject text, raw text, created_at timestamptz)`;

/** A captured message as staged by `sendBatch` and stored by `commit`. */
interface CapturedRow {
  id: string;
  region: string;
  message_id: string;
  envelope_from: string;
  envelope_to: string[];
  subject: string;
  raw: string;
  created_at: string;
}

/**
 * The embedded default: stores each message's MIME in Postgres instead of relaying it,
 * so a fresh install sends end to end without any outside account (`postlane outbox`).
 */
export class CaptureProvider implements EmailProvider {
  readonly type = 'capture';
  readonly takesReturnPath = true;

  private readonly mime = new MimeThreads();

  constructor(
    readonly regions: readonly string[],
    private readonly domainOptions: { selector: string; spfInclude: string | undefined },
  ) {}

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    const [outcome] = await this.sendBatch([message], signal, () => {});
    if (outcome instanceof ProviderError) throw outcome;
    return outcome!;
  }

  /**
   * Builds the batch's MIME and stages each message; nothing is stored until `commit`, in the
   * transaction that records the outcomes, so a crash in between stores nothing and the retry
   * stores the message once.
   */
  async sendBatch(
    messages: readonly OutboundMessage[],
    _signal: AbortSignal,
    onOutcome: OnOutcome,
  ): Promise<BatchOutcome[]> {
    const region = this.regions[0]!;
    const built = await this.mime.build(messages);
    const createdAt = new Date().toISOString();
    const outcomes = built.map((mime, at): BatchOutcome => {
      if ('error' in mime) return new ProviderError(mime.error, false);
      const message = messages[at]!;
      // One row per envelope, as a relay would get one transaction each (VERP: one per recipient); the content is the same.
      const staged: CapturedRow[] = envelopesOf(message).map((envelope) => ({
        id: newId(),
        region,
        message_id: message.messageId,
        envelope_from: envelope.from,
        envelope_to: envelope.to,
        subject: message.subject,
        raw: mime.raw,
        created_at: createdAt,
      }));
      return {
        providerMessageId: staged[0]!.id,
        recipients: staged.flatMap((row) =>
          row.envelope_to.map((address) => ({
            address,
            accepted: true,
            transient: false,
            response: '250 captured',
          })),
        ),
        staged,
      };
    });
    outcomes.forEach((outcome, at) => void onOutcome(at, outcome));
    return outcomes;
  }

  /** The staged messages in one INSERT: per-message inserts would make the store the ceiling of a broadcast. */
  async commit(tx: EntityManager, outcomes: readonly SendResult[]): Promise<void> {
    const rows = outcomes.flatMap((outcome) => (outcome.staged as CapturedRow[] | undefined) ?? []);
    // One parameter, not values inlined into the SQL text by the ORM (escaping every raw message on the event loop).
    if (rows.length > 0) await sqlQuery(tx, INSERT_CAPTURED, [JSON.stringify(rows)], 'postlane_capture_messages');
  }

  /** The same records and signing as an SMTP relay, so DNS can be rehearsed before mail leaves. */
  setUpDomain(domain: { name: string }): Promise<DomainSetup> {
    return postlaneSignedDomainSetup(domain.name, {
      selector: this.domainOptions.selector,
      spf: spfRecordValue(this.domainOptions.spfInclude),
    });
  }

  async tearDownDomain(): Promise<void> {}

  async verify(): Promise<void> {}

  close(): Promise<void> {
    return this.mime.close();
  }
}
