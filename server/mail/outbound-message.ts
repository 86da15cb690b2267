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
  /**
   * The envelope sender (MAIL FROM) of each envelope recipient when it is not the From address:
   * its own VERP return path, so a bounce to it speaks for that recipient alone. The message then
   * goes in one envelope per distinct sender (`envelopesOf`).
   */
  returnPaths?: Record<string, string>;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: { filename: string; contentType: string | null; content: Buffer }[];
  /**
   * The message as submitted over SMTP: it goes out as it is (its header block made ours: see
   * `submittedMime`), signed like any other, instead of one composed from the fields above.
   */
  raw?: Buffer;
  /** The source IP pool the team is pinned to (direct delivery with pools); unset, the provider's default pool. */
  ipPool?: string;
  /** Set when Postlane signs for the sending domain (providers that do not sign themselves). */
  dkim?: DkimKey;
}

/** A DKIM signing key as nodemailer takes it. */
export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
}
