/** Header fields of a submitted message that are not sent on: ours to set, or blind copies and submission controls. */
const DROPPED = new Set([
  'message-id',
  'bcc',
  'return-path',
  'resend-idempotency-key',
  'x-postlane-tags',
  'x-postlane-email-id',
]);

/**
 * A message submitted over SMTP as it goes out: its body and header fields as submitted, but
 * with our Message-ID (the one the API shows, so replies and bounces find the email) and email
 * id, a Date if it had none, and without a Bcc field or the submission's control fields.
 */
export function submittedMime(raw: Uint8Array, { messageId, emailId }: { messageId: string; emailId: string }): Buffer {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const end = crlf !== -1 && (lf === -1 || crlf < lf) ? crlf + 2 : lf !== -1 ? lf + 1 : bytes.length;
  const head = bytes.subarray(0, end).toString('latin1');
  // One field per entry, its folded continuation lines with it.
  const fields = head.split(/\r?\n(?![ \t])/).filter((field) => field.length > 0);
  const kept = fields.filter((field) => !DROPPED.has(field.slice(0, field.indexOf(':')).trim().toLowerCase()));
  const ours = [`Message-ID: ${messageId}`, `X-Postlane-Email-Id: ${emailId}`];
  if (!kept.some((field) => /^date\s*:/i.test(field)))
    ours.push(`Date: ${new Date().toUTCString().replace('GMT', '+0000')}`);
  return Buffer.concat([Buffer.from([...ours, ...kept].join('\r\n') + '\r\n', 'latin1'), bytes.subarray(end)]);
}
