import emailAddresses from 'email-addresses';

export interface Mailbox {
  name: string | null;
  address: string;
  /** Canonical `Name <user@host>`, or the bare address when there is no name. */
  formatted: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * One mailbox, parsed strictly (RFC 5322/6532): never a lenient header parser, which would
 * happily read `a@b.com\r\nBcc: x@y.com` as two recipients. Returns the reason on failure.
 */
export function parseMailbox(input: string): Mailbox | string {
  if (CONTROL_CHARACTERS.test(input)) return 'must not contain control characters or line breaks';
  const parsed = emailAddresses.parseOneAddress({ input, rfc6532: true });
  if (!parsed || parsed.type !== 'mailbox') return 'must be a single email address, like `Name <user@example.com>`';
  const { local, domain, name } = parsed as emailAddresses.ParsedMailbox;
  if (domain.startsWith('[') || !domain.includes('.')) return 'must have a fully qualified domain';
  if (local.length > 64 || parsed.address.length > 254) return 'is too long';
  if (name?.includes('@')) return 'display name must not contain @';
  const address = `${local}@${domain}`;
  return { name: name || null, address, formatted: name ? `${quoteDisplayName(name)} <${address}>` : address };
}

/** Quote a display name whenever it holds characters outside RFC 5322 `atext` and spaces. */
function quoteDisplayName(name: string): string {
  if (/^[\p{L}\p{N}!#$%&'*+\-/=?^_`{|}~ ]+$/u.test(name)) return name;
  return `"${name.replace(/(["\\])/g, '\\$1')}"`;
}
