import { type AddressObject, simpleParser } from 'mailparser';

export interface ParsedAttachment {
  filename: string | null;
  contentType: string;
  contentDisposition: string | null;
  contentId: string | null;
  content: Buffer;
}

export interface ParsedMessage {
  messageId: string;
  subject: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  headers: Record<string, string>;
  text: string | null;
  html: string | null;
  attachments: ParsedAttachment[];
  parseError: string | null;
}

const EMPTY: Omit<ParsedMessage, 'parseError'> = {
  messageId: '',
  subject: '',
  from: '',
  to: [],
  cc: [],
  bcc: [],
  replyTo: [],
  headers: {},
  text: null,
  html: null,
  attachments: [],
};

/** A message stored raw, unparsed, for the reason given. */
export function unparsed(reason: string): ParsedMessage {
  return { ...EMPTY, headers: Object.create(null) as Record<string, string>, parseError: reason };
}

/** PostgreSQL text and jsonb cannot hold U+0000 (the insert fails, and the sender would be told 451 for ever): a NUL a sender wrote reads U+FFFD. */
const storable = (text: string) => text.replaceAll('\0', '\uFFFD');
const storableOrNull = (text: string | null | undefined) => (text == null ? null : storable(text));

/** `Name <a@b>` or `a@b` per mailbox, groups flattened. */
function formatted(field: AddressObject | AddressObject[] | undefined): string[] {
  const objects = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return objects
    .flatMap((object) => object.value)
    .flatMap((entry) => entry.group ?? [entry])
    .filter((mailbox) => mailbox.address)
    .map((mailbox) => storable(mailbox.name ? `${mailbox.name} <${mailbox.address}>` : mailbox.address!));
}

/**
 * Header fields by lower-case name, unfolded; a repeated field's values joined by a newline (Received, DKIM-Signature).
 * Built in a `Map` so a sender's field names (`constructor`, `__proto__`, `toString`) are plain keys, never
 * inherited members; the result is a null-prototype object with own enumerable properties only.
 */
export function headerMap(lines: readonly { key: string; line: string }[]): Record<string, string> {
  const fields = new Map<string, string>();
  for (const { key, line } of lines) {
    const value = storable(
      line
        .slice(line.indexOf(':') + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    );
    const earlier = fields.get(storable(key));
    fields.set(storable(key), earlier === undefined ? value : `${earlier}\n${value}`);
  }
  const headers = Object.create(null) as Record<string, string>;
  for (const [key, value] of fields)
    Object.defineProperty(headers, key, { value, enumerable: true, writable: true, configurable: true });
  return headers;
}

/**
 * Reads a received message into the fields the API shows. The HTML keeps its `cid:` references
 * (the read API resolves them per request) and no text or HTML is invented from the other. Mail
 * that cannot be read is still kept: the caller stores the raw bytes with `parseError` set.
 */
export async function parseReceived(raw: Buffer): Promise<ParsedMessage> {
  try {
    const mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipHtmlToText: true });
    // mailparser reads anything; bytes without a single well-formed header field (RFC 5322 2.2) are not a message.
    if (!mail.headerLines.some(({ line }) => /^[!-9;-~]+:/.test(line)))
      return { ...EMPTY, parseError: 'no header fields: not an RFC 5322 message' };
    return {
      messageId: storable(mail.messageId ?? ''),
      subject: storable(mail.subject ?? ''),
      from: formatted(mail.from)[0] ?? '',
      to: formatted(mail.to),
      cc: formatted(mail.cc),
      bcc: formatted(mail.bcc),
      replyTo: formatted(mail.replyTo),
      headers: headerMap(mail.headerLines),
      text: storableOrNull(mail.text),
      html: typeof mail.html === 'string' ? storable(mail.html) : null,
      attachments: mail.attachments.map((part) => ({
        filename: storableOrNull(part.filename),
        contentType: storable(part.contentType),
        contentDisposition: storableOrNull(part.contentDisposition),
        contentId: storableOrNull(part.cid),
        content: part.content,
      })),
      parseError: null,
    };
  } catch (err) {
    return { ...EMPTY, parseError: storable(err instanceof Error ? err.message : String(err)) };
  }
}
