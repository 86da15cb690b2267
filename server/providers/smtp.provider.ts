import type { OutboundMessage } from '../mail/outbound-message.js';
import nodemailer from 'nodemailer';
import type { ProviderConfig } from '../../config/index.js';
import { envelopesOf, SAFE_TRANSPORT_OPTIONS, toNodemailerMessage } from '../mail/mime.js';
import { postlaneSignedDomainSetup, spfRecordValue } from './postlane-signed-domain.js';
import {
  type BatchOutcome,
  type DomainSetup,
  type EmailProvider,
  mapConcurrently,
  type OnOutcome,
  ProviderError,
  type RecipientResult,
  type SendResult,
  Unrecorded,
} from './provider.js';

type SmtpConfig = Extract<ProviderConfig, { type: 'smtp' }>;

/**
 * The duplicate window after a crash, per pooled connection: its message in an SMTP transaction,
 * one queued for it, and three sent in the last few milliseconds whose outcome is still being
 * written (docs/guarantees.md: 25 with the default 5 connections).
 */
export const UNRECORDED_PER_CONNECTION = 5;

interface SmtpFailure extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  rejectedErrors?: SmtpFailure[];
  recipient?: string;
}

/** A relay over SMTP through a pooled nodemailer transport; timeouts stay well below the send lease. */
export class SmtpProvider implements EmailProvider {
  readonly type = 'smtp';
  readonly takesReturnPath = true;
  readonly regions: readonly string[];
  private readonly transport;
  private readonly domainOptions: { selector: string; spf: string };
  private readonly maxConnections: number;
  /** What a crash can send twice: messages on the connections, queued for them, or sent and not yet recorded. */
  private readonly unrecorded: Unrecorded;

  constructor(config: SmtpConfig, timeoutMs: number, dkimSelector: string) {
    this.regions = config.regions;
    this.maxConnections = config.max_connections;
    this.unrecorded = new Unrecorded(config.max_connections * UNRECORDED_PER_CONNECTION, config.max_connections * 2);
    const url = new URL(config.url);
    this.domainOptions = { selector: dkimSelector, spf: spfRecordValue(config.spf_include ?? url.hostname) };
    this.transport = nodemailer.createTransport({
      pool: true,
      host: url.hostname,
      port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
      secure: url.protocol === 'smtps:',
      auth: url.username
        ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
        : undefined,
      maxConnections: config.max_connections,
      maxMessages: 100,
      rateDelta: 1000,
      rateLimit: config.rate_per_second,
      connectionTimeout: Math.min(timeoutMs, 30_000),
      greetingTimeout: Math.min(timeoutMs, 30_000),
      socketTimeout: timeoutMs,
      ...SAFE_TRANSPORT_OPTIONS,
    });
  }

  /**
   * One SMTP transaction per envelope (per recipient with VERP return paths), one after the other
   * on this message's lane, their verdicts merged into the message's one outcome. A resolved send
   * can still have refused some recipients, and a send where every recipient was refused rejects
   * with their errors (EENVELOPE): both come back as per-recipient verdicts. An envelope that fails
   * as a whole gives its recipients its verdict (retried when transient) beside the others'
   * acceptances, so those accepted are never sent again; only when every envelope fails does the
   * message fail, as a single-envelope message always did.
   */
  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    const options = toNodemailerMessage(message);
    const recipients: RecipientResult[] = [];
    let providerMessageId = message.messageId;
    let failure: ProviderError | null = null;
    let sentAny = false;
    for (const envelope of envelopesOf(message)) {
      try {
        const info = await this.transport.sendMail({ ...options, envelope, signal });
        providerMessageId = info.messageId;
        sentAny = true;
        recipients.push(
          ...info.accepted.map((address) => ({ address, accepted: true, transient: false, response: info.response })),
          ...((info.rejectedErrors ?? []) as SmtpFailure[]).map(refusal),
        );
      } catch (err) {
        const smtp = err as SmtpFailure;
        if (smtp.code === 'EENVELOPE' && smtp.rejectedErrors?.length) {
          sentAny = true;
          recipients.push(...smtp.rejectedErrors.map(refusal));
          continue;
        }
        const error = classify(smtp);
        failure ??= error;
        recipients.push(
          ...envelope.to.map((address) => ({
            address,
            accepted: false,
            transient: error.transient,
            response: error.message,
          })),
        );
      }
    }
    if (failure && !sentAny) throw failure;
    return { providerMessageId, recipients };
  }

  /**
   * Keeps every pooled connection busy: twice as many messages in hand as connections (across all
   * batches), so each connection finds the next one queued the moment it finishes one; and no more
   * than UNRECORDED_PER_CONNECTION per connection taken and not yet recorded by the caller.
   */
  sendBatch(messages: readonly OutboundMessage[], signal: AbortSignal, onOutcome: OnOutcome): Promise<BatchOutcome[]> {
    return mapConcurrently(
      messages,
      this.maxConnections * 2,
      (message, laneSignal) => this.send(message, laneSignal),
      signal,
      onOutcome,
      this.unrecorded,
    );
  }

  setUpDomain(domain: { name: string }): Promise<DomainSetup> {
    return postlaneSignedDomainSetup(domain.name, this.domainOptions);
  }

  async tearDownDomain(): Promise<void> {}

  async verify(): Promise<void> {
    await this.transport.verify();
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** 5xx is permanent; 4xx, timeouts and connection trouble are worth another try. */
const isTransient = (code: number | undefined) => code === undefined || code < 500;

/** nodemailer's codes for a message that cannot be built (an attachment, a body it refuses): the same message fails the same way every time. */
const UNBUILDABLE = new Set(['ESTREAM', 'EFILEACCESS', 'EURLACCESS', 'EMAXRECIPIENTS']);

const refusal = (err: SmtpFailure) => ({
  address: err.recipient ?? '',
  accepted: false,
  transient: isTransient(err.responseCode),
  response: err.response ?? err.message,
});

function classify(err: SmtpFailure): ProviderError {
  if (err.code && UNBUILDABLE.has(err.code))
    return new ProviderError(`the message could not be built: ${err.message}`, false);
  return new ProviderError(err.response ?? err.message, isTransient(err.responseCode), err.responseCode, err.code);
}
