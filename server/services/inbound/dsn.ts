/** One recipient's block of an RFC 3464 delivery-status part. */
export interface DsnRecipient {
  address: string;
  /** `failed`, `delayed`, `delivered`, `relayed` or `expanded`. */
  action: string;
  /** An RFC 3463 code such as `5.1.1`. */
  status: string;
  diagnosticCode: string | null;
}

export interface Dsn {
  /** The report's own Message-ID, to recognise the same report posted twice. */
  messageId: string | null;
  /** The Message-ID of the message it reports on, from the returned headers or message. */
  originalMessageId: string | null;
  recipients: DsnRecipient[];
}

type Headers = Map<string, string>;

/** Header fields of a block (first occurrence wins), folded lines joined, names lower-cased. */
function parseFields(block: string): Headers {
  const fields: Headers = new Map();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
  }
  return fields;
}

/** A MIME entity: its headers, and its body with the transfer encoding undone (reports are 7bit, some MTAs use base64 or QP). */
function splitEntity(raw: string): { headers: Headers; body: string } {
  const match = /\r?\n\r?\n/.exec(raw);
  const headers = parseFields(match ? raw.slice(0, match.index) : raw);
  const body = match ? raw.slice(match.index + match[0].length) : '';
  const encoding = headers.get('content-transfer-encoding')?.toLowerCase();
  if (encoding === 'base64') return { headers, body: Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8') };
  if (encoding === 'quoted-printable')
    return {
      headers,
      body: body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    };
  return { headers, body };
}

const mediaType = (headers: Headers) =>
  (headers.get('content-type') ?? 'text/plain').split(';')[0]!.trim().toLowerCase();

/** The parts of a multipart entity, nested multiparts flattened; a leaf entity is its own only part. */
function leaves(entity: { headers: Headers; body: string }, depth = 0): { headers: Headers; body: string }[] {
  const boundary = /boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i.exec(entity.headers.get('content-type') ?? '');
  if (!mediaType(entity.headers).startsWith('multipart/') || !boundary || depth > 5) return [entity];
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  const sections = entity.body.split(
    new RegExp(`^${delimiter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*\\r?$`, 'm'),
  );
  // Before the first delimiter is the preamble, after the closing one the epilogue.
  return sections.slice(1, -1).flatMap((section) => leaves(splitEntity(section.replace(/^\r?\n/, '')), depth + 1));
}

/** `rfc822; user@host` → `user@host`. */
const typedAddress = (value: string | undefined) =>
  value
    ?.replace(/^[^;]*;\s*/, '')
    .replace(/^<|>$/g, '')
    .trim() ?? '';

/**
 * Reads a delivery status notification (RFC 3464: `multipart/report; report-type=delivery-status`)
 * as an MTA hands it over: the per-recipient verdicts, and the Message-ID of the message they are
 * about. Anything that is not such a report gives null.
 */
export function parseDsn(raw: string): Dsn | null {
  const top = splitEntity(raw);
  if (mediaType(top.headers) !== 'multipart/report') return null;
  const parts = leaves(top);
  const status = parts.find((part) =>
    ['message/delivery-status', 'message/global-delivery-status'].includes(mediaType(part.headers)),
  );
  if (!status) return null;
  // The per-message fields come first, then one block per recipient, separated by blank lines.
  const recipients = status.body
    .split(/\r?\n[ \t]*\r?\n/)
    .map(parseFields)
    .filter((fields) => fields.has('final-recipient') && fields.has('action'))
    .map((fields) => ({
      address: typedAddress(fields.get('final-recipient')),
      action: fields.get('action')!.toLowerCase(),
      status: /\d\.\d{1,3}\.\d{1,3}/.exec(fields.get('status') ?? '')?.[0] ?? '',
      diagnosticCode: fields.get('diagnostic-code') ?? null,
    }))
    .filter((recipient) => recipient.address.includes('@'));
  const returned = parts.find((part) =>
    ['text/rfc822-headers', 'message/rfc822', 'message/global', 'message/global-headers'].includes(
      mediaType(part.headers),
    ),
  );
  // Headers alone, or a whole message: either way its header block ends at the first blank line.
  const originalMessageId = returned
    ? (parseFields(returned.body.split(/\r?\n\r?\n/)[0]!).get('message-id') ?? null)
    : null;
  return { messageId: top.headers.get('message-id') ?? null, originalMessageId, recipients };
}
