import emailAddresses from 'email-addresses';
import { LRUCache } from 'lru-cache';

export interface Mailbox {
  name: string | null;
  address: string;
  /** Canonical `Name <user@host>`, or the bare address when there is no name. */
  formatted: string;
}

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
/** Half of a UTF-16 pair without the other half: not text, and Postgres refuses it. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/**
 * RFC 5322 dot-atom (with RFC 6532 UTF-8). Quoted local parts (`"a b"@x`) are refused: relays and
 * mail libraries re-parse them leniently, and `"x@evil.org y"@example.com` has been seen to reach x@evil.org.
 */
const DOT_ATOM = /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
/** An address line (RFC 5322 caps lines at 998); longer input is refused before the parser sees it. */
const MAX_INPUT_LENGTH = 998;

/**
 * One mailbox, parsed strictly (RFC 5322/6532): never a lenient header parser, which would
 * happily read `a@b.com\r\nBcc: x@y.com` as two recipients. Returns the reason on failure.
 */
export function parseMailbox(input: string): Mailbox | string {
  const known = parsed.get(input);
  if (known !== undefined) return known;
  const result = parseUncached(input);
  if (typeof result !== 'string') parsed.set(input, Object.freeze(result));
  return result;
}

/**
 * The strict parser is the costliest step of accepting a send, and the same senders and
 * recipients recur (a from address on every request, a list in every batch): valid results are kept.
 */
const parsed = new LRUCache<string, Mailbox>({ max: 10_000 });

function parseUncached(input: string): Mailbox | string {
  if (input.length > MAX_INPUT_LENGTH) return 'is too long';
  if (CONTROL_CHARACTERS.test(input) || LONE_SURROGATE.test(input))
    return 'must not contain control characters, line breaks or broken characters';
  let mailbox: ReturnType<typeof emailAddresses.parseOneAddress>;
  try {
    mailbox = emailAddresses.parseOneAddress({ input, rfc6532: true });
  } catch {
    // The parser recurses on nested comments; pathological input exhausts the stack.
    mailbox = null;
  }
  if (!mailbox || mailbox.type !== 'mailbox') return 'must be a single email address, like `Name <user@example.com>`';
  const { local, domain, name } = mailbox;
  if (!DOT_ATOM.test(local)) return 'must not use a quoted local part';
  if (domain.startsWith('[') || !domain.includes('.')) return 'must have a fully qualified domain';
  if (local.length > 64 || mailbox.address.length > 254) return 'is too long';
  if (name?.includes('@')) return 'display name must not contain @';
  const address = `${local}@${domain}`;
  return { name: name || null, address, formatted: name ? `${quoteDisplayName(name)} <${address}>` : address };
}

/**
 * The name and address of a mailbox's `formatted` form, without parsing it again: the inverse of
 * `formatted`, for the send path, whose stored addresses all came out of parseMailbox (the strict
 * parser costs more per message than the rest of building one). Null for anything else.
 */
export function splitFormatted(formatted: string): Pick<Mailbox, 'name' | 'address'> | null {
  if (!formatted.endsWith('>'))
    return formatted.includes('@') && !formatted.includes(' ') ? { name: null, address: formatted } : null;
  // An address has no spaces, so the last " <" opens it, whatever the (quoted) name holds.
  const open = formatted.lastIndexOf(' <');
  if (open <= 0) return null;
  const name = formatted.slice(0, open);
  return {
    name: name.startsWith('"') ? name.slice(1, -1).replace(/\\(["\\])/g, '$1') : name,
    address: formatted.slice(open + 2, -1),
  };
}

/** Quote a display name whenever it holds characters outside RFC 5322 `atext` and spaces. */
function quoteDisplayName(name: string): string {
  if (/^[\p{L}\p{N}!#$%&'*+\-/=?^_`{|}~ ]+$/u.test(name)) return name;
  return `"${name.replace(/(["\\])/g, '\\$1')}"`;
}
