import type { OutboundMessage } from '../mail/outbound-message.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SESv2Client, SESv2ServiceException } from '@aws-sdk/client-sesv2';
import type { ProviderConfig } from '../../config/index.js';
import { composeRawMime } from '../mail/mime.js';
import { type DomainSetup, type EmailProvider, ProviderError, type SendResult } from './provider.js';

export type SesConfig = Extract<ProviderConfig, { type: 'ses' }>;

/** The tag SES carries into every event of a message, so ingestion finds the email without a lookup by MessageId. */
export const EMAIL_ID_TAG = 'email_id';

type Sdk = typeof import('@aws-sdk/client-sesv2');
let sdk: Promise<Sdk> | undefined;
/** Loaded on first use: the SDK takes about 2 s to import, which no CLI command without SES should pay. */
const loadSdk = () => (sdk ??= import('@aws-sdk/client-sesv2'));

/** SES error names worth another try later: throttling, a sending quota that refills, SES's own faults. */
const TRANSIENT_ERRORS = new Set([
  'TooManyRequestsException',
  'LimitExceededException',
  'ThrottlingException',
  'InternalFailure',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
]);

/**
 * Amazon SES v2 in one AWS region (the Postlane region's name is the AWS region's). Postlane builds
 * the MIME itself and sends it as Raw content, so headers, attachments, List-Unsubscribe and the
 * Message-ID are exactly ours; SES signs with the domain's Easy DKIM. Every message carries the
 * configuration set (whose event destination feeds the ingestion webhook) and our `email_id` tag.
 */
export class SesProvider implements EmailProvider {
  readonly type = 'ses';
  /** SES's API takes no envelope sender: its own, or the identity's custom MAIL FROM domain, whose bounces SES handles. */
  readonly takesReturnPath = false;
  readonly regions: readonly string[];
  private api: Promise<{ sdk: Sdk; client: SESv2Client }> | undefined;
  private readonly minGapMs: number;
  /** When the next send may start in this process: `rate_per_second` spaced out evenly. */
  private nextSlot = 0;

  constructor(
    private readonly config: SesConfig,
    private readonly region: string,
    private readonly timeoutMs: number,
  ) {
    this.regions = [region];
    this.minGapMs = 1000 / config.rate_per_second;
  }

  private client(): Promise<{ sdk: Sdk; client: SESv2Client }> {
    const { config, timeoutMs } = this;
    this.api ??= loadSdk().then((sdk) => ({
      sdk,
      client: new sdk.SESv2Client({
        region: this.region,
        endpoint: config.endpoint,
        // Unset: the default AWS chain (environment, shared files, instance or task role).
        credentials: config.access_key_id
          ? {
              accessKeyId: config.access_key_id,
              secretAccessKey: config.secret_access_key!,
              sessionToken: config.session_token,
            }
          : undefined,
        // A throttled call is retried briefly here; anything longer is the send job's backoff.
        maxAttempts: config.max_attempts,
        requestHandler: { connectionTimeout: Math.min(timeoutMs, 10_000), requestTimeout: timeoutMs },
      }),
    }));
    return this.api;
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    await this.pace(signal);
    const { raw, envelope } = await composeRawMime(message);
    const { sdk, client } = await this.client();
    try {
      const result = await client.send(
        new sdk.SendEmailCommand({
          FromEmailAddress: envelope.from,
          // Raw content: SES sends to these, not to the headers (Bcc is not in the headers at all).
          Destination: { ToAddresses: envelope.to },
          Content: { Raw: { Data: raw } },
          ConfigurationSetName: this.config.configuration_set,
          EmailTags: [{ Name: EMAIL_ID_TAG, Value: message.emailId }],
        }),
        { abortSignal: signal },
      );
      if (!result.MessageId) throw new ProviderError('SES accepted the message without a MessageId', true);
      const response = `SES MessageId ${result.MessageId}`;
      return {
        providerMessageId: result.MessageId,
        recipients: envelope.to.map((address) => ({ address, accepted: true, transient: false, response })),
      };
    } catch (err) {
      throw classify(err);
    }
  }

  /**
   * Creates the identity with Easy DKIM (SES signs, so `dkim: null`) and returns its three CNAMEs.
   * An identity that exists already (a domain re-added) keeps its tokens.
   */
  async setUpDomain(domain: { name: string }): Promise<DomainSetup> {
    const { sdk, client } = await this.client();
    let tokens: string[] | undefined;
    try {
      const created = await client.send(
        new sdk.CreateEmailIdentityCommand({
          EmailIdentity: domain.name,
          ConfigurationSetName: this.config.configuration_set,
        }),
      );
      tokens = created.DkimAttributes?.Tokens;
    } catch (err) {
      if ((err as Error).name !== 'AlreadyExistsException') throw classify(err);
      tokens = (await client.send(new sdk.GetEmailIdentityCommand({ EmailIdentity: domain.name }))).DkimAttributes
        ?.Tokens;
    }
    if (!tokens?.length) throw new ProviderError(`SES returned no DKIM tokens for ${domain.name}`, true);
    return {
      records: tokens.map((token) => ({
        record: 'DKIM' as const,
        name: `${token}._domainkey.${domain.name}`,
        type: 'CNAME' as const,
        value: `${token}.dkim.amazonses.com`,
      })),
      dkim: null,
    };
  }

  async tearDownDomain(domain: { name: string }): Promise<void> {
    const { sdk, client } = await this.client();
    try {
      await client.send(new sdk.DeleteEmailIdentityCommand({ EmailIdentity: domain.name }));
    } catch (err) {
      if ((err as Error).name !== 'NotFoundException') throw classify(err);
    }
  }

  async verify(): Promise<void> {
    const { sdk, client } = await this.client();
    const account = await client.send(new sdk.GetAccountCommand({}));
    if (account.SendingEnabled === false)
      throw new ProviderError(`SES sending is disabled for this account in ${this.regions[0]}`, false);
  }

  async close(): Promise<void> {
    (await this.api)?.client.destroy();
  }

  private async pace(signal: AbortSignal): Promise<void> {
    const now = Date.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + this.minGapMs;
    if (slot > now) await sleep(slot - now, undefined, { signal });
  }
}

/**
 * Throttling, SES's 5xx and network trouble (no HTTP status at all) are transient; a rejected
 * message, an unverified identity, a paused or suspended account and other 4xx are not.
 */
function classify(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const failure = err as Partial<SESv2ServiceException> & Error;
  const status = failure.$metadata?.httpStatusCode;
  const transient =
    TRANSIENT_ERRORS.has(failure.name) ||
    failure.$retryable !== undefined ||
    status === undefined ||
    status >= 500 ||
    status === 429;
  return new ProviderError(`SES ${failure.name}: ${failure.message}`, transient, status, failure.name);
}
