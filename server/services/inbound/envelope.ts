/** What the SMTP session knew about a message. */
export interface ReceivedEnvelope {
  /** MAIL FROM; empty for the null sender. */
  mailFrom: string;
  /** Every RCPT TO the listener accepted. */
  recipients: readonly string[];
  peerIp: string;
  helo: string;
}
