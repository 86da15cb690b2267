/** A parsed mailbox: providers get the parts, never a string they would parse again their own way. */
export interface Address {
  name: string | null;
  address: string;
}

/** What a provider needs to hand one email over; built from validated fields only. */
export interface OutboundMessage {
  emailId: string;
  messageId: string;
  from: Address;
  to: Address[];
  cc: Address[];
  bcc: Address[];
  replyTo: Address[];
  /** Who gets it this time: every recipient at first, then only those a retry is still owed to. */
  envelopeTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: { filename: string; contentType: string | null; content: Buffer }[];
  /** Set when Postlane signs for the sending domain (providers that do not sign themselves). */
  dkim?: DkimKey;
}

/** A DKIM signing key as nodemailer takes it. */
export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

/** A DNS record a provider needs published before it sends for a domain. */
export interface ExpectedRecord {
  record: 'DKIM' | 'SPF' | 'MX';
  name: string;
  type: 'TXT' | 'CNAME' | 'MX';
  value: string;
  priority?: number;
}

/** What a provider asks of a new domain: records to publish, and a key when Postlane must sign. */
export interface DomainSetup {
  records: ExpectedRecord[];
  dkim: { selector: string; privateKeyPem: string } | null;
}

export interface RecipientResult {
  address: string;
  accepted: boolean;
  /** For a refused recipient: whether trying again later may work (SMTP 4xx). */
  transient: boolean;
  response: string;
}

export interface SendResult {
  providerMessageId: string;
  recipients: RecipientResult[];
}

/** `transient` failures are retried with backoff; the others fail the email for good. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    readonly responseCode?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface EmailProvider {
  readonly type: string;
  readonly regions: readonly string[];
  send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult>;
  /**
   * A domain was added in one of this provider's regions. Relays return the records Postlane signs
   * for (DKIM key, SPF include); a provider with its own identities (SES) creates one here and
   * returns its DKIM CNAMEs, with `dkim: null`.
   */
  setUpDomain(domain: { id: string; name: string }): Promise<DomainSetup>;
  /** The domain was removed: a provider with its own identities deletes it. */
  tearDownDomain(domain: { id: string; name: string }): Promise<void>;
  /** Reachability and credentials, for health checks and `postlane doctor`. */
  verify(): Promise<void>;
  close(): Promise<void>;
}
