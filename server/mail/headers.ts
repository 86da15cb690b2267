import { LONE_SURROGATE } from './address.js';

/** Headers a caller may set besides any `X-` header (spec, rules of email sending 3). */
const ALLOWED_NAMED_HEADERS = new Set(
  [
    'In-Reply-To',
    'References',
    'Importance',
    'Priority',
    'Comments',
    'Keywords',
    'Organization',
    'List-Unsubscribe',
    'List-Unsubscribe-Post',
  ].map((h) => h.toLowerCase()),
);
/** Our own namespace and Resend's stay ours: a caller must not forge them. */
const RESERVED_PREFIXES = ['x-resend-', 'x-postlane-'];
/** RFC 5322 field name: printable ASCII except the colon. */
const FIELD_NAME = /^[!-9;-~]+$/;

/** Why a custom header is refused, or null when it is allowed. */
export function refuseHeader(name: string, value: string): string | null {
  const lower = name.toLowerCase();
  if (!FIELD_NAME.test(name)) return 'is not a valid header name';
  if (RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix))) return 'is reserved';
  if (!lower.startsWith('x-') && !ALLOWED_NAMED_HEADERS.has(lower))
    return 'is not a header you may set (any X- header, or In-Reply-To, References, Importance, Priority, Comments, Keywords, Organization, List-Unsubscribe, List-Unsubscribe-Post)';
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'must not contain line breaks or control characters';
  if (LONE_SURROGATE.test(value)) return 'must not contain broken characters (a lone UTF-16 surrogate)';
  if (value.length > 998) return 'is too long';
  return null;
}

/**
 * RFC 2369 and RFC 8058, as the spec reads them: List-Unsubscribe (one or more `<https://…>` or
 * `<mailto:…>` targets, at least one https) and `List-Unsubscribe-Post: List-Unsubscribe=One-Click`
 * come together.
 */
export function refuseUnsubscribePair(headers: Record<string, string>): string | null {
  const find = (name: string) => Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const list = find('list-unsubscribe');
  const post = find('list-unsubscribe-post');
  if (list === undefined && post === undefined) return null;
  if (list === undefined || post === undefined)
    return 'List-Unsubscribe and List-Unsubscribe-Post must be set together';
  if (post.trim() !== 'List-Unsubscribe=One-Click') return 'List-Unsubscribe-Post must be `List-Unsubscribe=One-Click`';
  const targets = list.split(',').map((part) => part.trim());
  const valid = targets.every((t) => /^<(https:\/\/|mailto:)[^<>\s]+>$/i.test(t));
  if (!valid) return 'List-Unsubscribe must be one or more `<https://…>` or `<mailto:…>` targets, separated by commas';
  if (!targets.some((t) => /^<https:\/\//i.test(t))) return 'List-Unsubscribe needs an https target';
  return null;
}
