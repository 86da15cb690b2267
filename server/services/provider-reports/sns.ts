import { createVerify, X509Certificate } from 'node:crypto';
import { type Agent, get } from 'node:https';
import { LRUCache } from 'lru-cache';
import * as v from 'valibot';
import { ApiError, serviceUnavailable } from '../../errors.js';

/** The SNS envelope fields we read; SNS adds others (UnsubscribeURL) that the signature does not cover. */
const SnsMessageSchema = v.object({
  Type: v.picklist(['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation']),
  MessageId: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  TopicArn: v.string(),
  Message: v.string(),
  Timestamp: v.string(),
  SignatureVersion: v.picklist(['1', '2']),
  Signature: v.string(),
  SigningCertURL: v.string(),
  Subject: v.optional(v.string()),
  Token: v.optional(v.string()),
  SubscribeURL: v.optional(v.string()),
});
export type SnsMessage = v.InferOutput<typeof SnsMessageSchema>;

export const invalidNotification = (message: string) => new ApiError(400, 'invalid_notification', message);
export const untrustedNotification = (message: string) => new ApiError(403, 'untrusted_notification', message);

/** Parses the raw body SNS posts (JSON sent as text/plain); anything else is a 400. */
export function parseSnsMessage(text: string): SnsMessage {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidNotification('The body is not an SNS message: it is not JSON.');
  }
  const result = v.safeParse(SnsMessageSchema, json);
  if (!result.success)
    throw invalidNotification(
      `The body is not an SNS message: ${Object.keys(v.flatten(result.issues).nested ?? {}).join(', ') || 'not an object'} missing or wrong.`,
    );
  return result.output;
}

/** SNS's own hosts: `sns.<region>.amazonaws.com`, or `.com.cn` in China. Anything else would make us fetch what a stranger names (SSRF). */
const SNS_HOST = /^sns\.[a-z]{2}(-gov)?-[a-z]+-\d\.amazonaws\.com(\.cn)?$/;

/** An https URL on an SNS host, on the default port, with no credentials in it. */
function isSnsUrl(raw: string): URL | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  return url.protocol === 'https:' &&
    url.port === '' &&
    url.username === '' &&
    url.password === '' &&
    SNS_HOST.test(url.hostname)
    ? url
    : null;
}

/** Where SNS keeps its signing certificates: `/SimpleNotificationService-<hex>.pem` on an SNS host. */
export function isSigningCertUrl(raw: string): boolean {
  const url = isSnsUrl(raw);
  return url !== null && /^\/SimpleNotificationService-[0-9a-f]+\.pem$/.test(url.pathname) && url.search === '';
}

/** The fields SNS signs, in its order, for each message type. */
function stringToSign(m: SnsMessage): string {
  const keys: (keyof SnsMessage)[] =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return keys
    .filter((key) => m[key] !== undefined)
    .map((key) => `${key}\n${m[key]}\n`)
    .join('');
}

const MAX_CERT_BYTES = 16 * 1024;

function readCertificate(pem: string): X509Certificate | null {
  try {
    return new X509Certificate(pem);
  } catch {
    return null;
  }
}

/**
 * Checks SNS messages the way AWS documents it, with node:crypto: the certificate URL rule, the
 * signature (version 2 is SHA256, 1 is the legacy SHA1), the topic allowlist, and the
 * SubscribeURL host rule. Certificates are cached by URL. All HTTPS goes through `agent`, which is
 * where a test points SNS's host names at a local server it trusts; the rules are the same.
 */
export class SnsVerifier {
  private readonly certificates = new LRUCache<string, Promise<X509Certificate>>({ max: 100, ttl: 24 * 3600_000 });

  constructor(
    private readonly topics: readonly string[],
    private readonly agent: Agent | undefined,
    private readonly timeoutMs = 5_000,
  ) {}

  /** Throws a 403 unless the message comes from SNS, for one of our topics. */
  async verify(message: SnsMessage): Promise<void> {
    // The topic first: a message for any other topic is refused without fetching anything.
    if (!this.topics.includes(message.TopicArn))
      throw untrustedNotification(`Topic ${message.TopicArn} is not in POSTLANE_SNS_TOPIC_ARNS.`);
    if (!isSigningCertUrl(message.SigningCertURL))
      throw untrustedNotification('SigningCertURL is not an SNS certificate URL.');
    const certificate = await this.certificate(message.SigningCertURL);
    const verifier = createVerify(message.SignatureVersion === '2' ? 'RSA-SHA256' : 'RSA-SHA1');
    verifier.update(stringToSign(message), 'utf8');
    if (!verifier.verify(certificate.publicKey, message.Signature, 'base64'))
      throw untrustedNotification('The signature does not match the message.');
  }

  /** Confirms a verified subscription to one of our topics by GETting its SubscribeURL, on an SNS host only. */
  async confirmSubscription(message: SnsMessage): Promise<void> {
    const url = message.SubscribeURL ? isSnsUrl(message.SubscribeURL) : null;
    if (!url) throw untrustedNotification('SubscribeURL is not an SNS URL.');
    // Not confirmed (SNS down or answering oddly): a 503 makes SNS send the confirmation again.
    const answer = await this.fetch(url).catch(() => null);
    if (answer?.status !== 200) throw serviceUnavailable();
  }

  /**
   * A certificate SNS does not serve, or that is not one, makes the message untrusted (403); SNS
   * out of reach is our trouble (503, and SNS retries). Failures are not cached.
   */
  private certificate(url: string): Promise<X509Certificate> {
    let pending = this.certificates.get(url);
    if (!pending) {
      pending = this.fetch(new URL(url)).then(
        ({ status, body }) => {
          const certificate = status === 200 ? readCertificate(body) : null;
          if (!certificate) throw untrustedNotification('SigningCertURL does not lead to a certificate.');
          return certificate;
        },
        () => {
          throw serviceUnavailable();
        },
      );
      pending.catch(() => this.certificates.delete(url));
      this.certificates.set(url, pending);
    }
    return pending;
  }

  /** One small GET with a deadline and a size cap; redirects are not followed. */
  private fetch(url: URL): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const request = get(url, { agent: this.agent, timeout: this.timeoutMs }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_CERT_BYTES) return request.destroy(new Error('response too large'));
          chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      });
      request.on('timeout', () => request.destroy(new Error('timed out')));
      request.on('error', reject);
    });
  }
}
