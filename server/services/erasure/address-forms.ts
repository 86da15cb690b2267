/**
 * The forms an address takes in stored text, as regular expressions built per address from its
 * characters: each character may appear as itself or in any of a surface's encodings, so mixed
 * forms (`erin%40Example.com`, `erin\u0040example.com`, all-`%XX`) match without listing them.
 * The same source compiles in PostgreSQL (ARE, to find candidate rows) and in JavaScript (to
 * rewrite them exactly, with the boundaries).
 */

import type { SecretBox } from '../../security/secret-box.js';
import { readPreferenceToken } from '../preferences/preference-token.js';

/** How one character of an address may be written in a kind of stored text. */
export interface Encoding {
  name: string;
  /** Regex sources (used case-insensitively) for one character in one letter case, also given as UTF-8 bytes. */
  forms: (char: string, bytes: readonly string[]) => string[];
  /** What may sit between two characters (quoted-printable's soft line break). */
  between?: string;
  /** A cheap pattern every text holding a character in this encoding matches; none for plain forms. */
  marker?: string;
}

const hex = (bytes: readonly string[], prefix: string) => bytes.map((b) => `${prefix}${b}`).join('');
const codeUnits = (char: string) =>
  [...char].flatMap((c) => Array.from({ length: c.length }, (_, i) => c.charCodeAt(i).toString(16).padStart(4, '0')));

const LITERAL: Encoding = { name: 'literal, any letter case', forms: (char) => [escapeRegex(char)] };
const PERCENT: Encoding = {
  name: 'percent-encoding (%40, %2B, any hex case, fully encoded)',
  forms: (_, bytes) => [hex(bytes, '%')],
  marker: '%[0-9a-f]{2}',
};
/** In a form-encoded value a space is `+`, so a decoded `+` tag reads as a space, or `%20`. */
const FORM: Encoding = { name: '+ form-encoding', forms: (char) => (char === '+' ? [' ', '%20'] : []) };
/** `\u0040`, and `\\u0040` where the escape itself was escaped (JSON in JSON, or in jsonb's text). */
const JSON_ESCAPE: Encoding = {
  name: 'JSON \\uXXXX escapes',
  forms: (char) => [
    codeUnits(char)
      .map((u) => `\\\\+u${u}`)
      .join(''),
  ],
  marker: '\\\\u[0-9a-f]{4}',
};
const HTML_ENTITY: Encoding = {
  name: 'HTML character references',
  forms: (char) => {
    const code = char.codePointAt(0)!;
    return [
      `&#0*${code};`,
      `&#x0*${code.toString(16)};`,
      ...(char === '@' ? ['&commat;'] : char === '.' ? ['&period;'] : []),
    ];
  },
  marker: '&#|&commat;|&period;',
};
/** Quoted-printable bodies and Q encoded-word headers (RFC 2045, 2047), split by soft line breaks anywhere. */
const QUOTED_PRINTABLE: Encoding = {
  name: 'quoted-printable, soft line breaks, Q encoded-words',
  forms: (_, bytes) => [hex(bytes, '=')],
  between: '(?:=\\r?\\n)?',
  marker: '=[0-9a-f]{2}|=\\r?\\n',
};

/** What any text column may hold: an address written by a client, a URL, JSON or HTML. */
export const TEXT_ENCODINGS: readonly Encoding[] = [LITERAL, PERCENT, FORM, JSON_ESCAPE, HTML_ENTITY];
/** Raw MIME: all of the above, plus quoted-printable. */
export const MIME_ENCODINGS: readonly Encoding[] = [...TEXT_ENCODINGS, QUOTED_PRINTABLE];

/** A token that embeds an address unreadably but for us: found by its pattern, read with the key. */
export interface EmbeddedToken {
  name: string;
  /** Global; group 1 is the token. */
  pattern: RegExp;
  reads: (secrets: SecretBox, token: string) => string | null;
}

/** The sealed token of an unsubscribe or preference link (`/unsubscribe/<token>`, `/preferences/<token>`). */
export const PREFERENCE_TOKEN: EmbeddedToken = {
  name: 'unsubscribe and preference tokens',
  pattern: /\/(?:preferences|unsubscribe)\/([A-Za-z0-9_-]{20,})/g,
  reads: (secrets, token) => readPreferenceToken(secrets, token)?.email ?? null,
};

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function addressSource(address: string, encodings: readonly Encoding[]): string {
  const between = encodings.map((e) => e.between).find(Boolean) ?? '';
  return [...address]
    .map((char) => {
      // Every encoding of every letter case: `%C3%89` is É, not é, whatever the hex digits' case;
      // and Postgres folds case by the database's locale, which may stop at ASCII.
      const variants = [...new Set([char, char.toLowerCase(), char.toUpperCase()])];
      const forms = variants.flatMap((variant) => {
        const bytes = [...Buffer.from(variant, 'utf8')].map((b) => b.toString(16).padStart(2, '0'));
        return encodings.flatMap((e) => e.forms(variant, bytes));
      });
      return `(?:${[...new Set(forms)].join('|')})`;
    })
    .join(between);
}

/**
 * Never inside a longer address (ann@x.com in joann@x.com or ann@x.com.au), unless what comes
 * before is itself an encoded character (`%3C`, `\n`, `\u003c`, `&lt;`, `=3D`). A hyphen before
 * does not stop a match: keys and paths such as `welcome-ann@x.com` hold the address, and
 * scrubbing one more look-alike is the safer mistake.
 */
function bounded(source: string): string {
  const before =
    '(?:(?<![\\p{L}\\p{N}._%+])|(?<=%[0-9a-f]{2})|(?<==[0-9a-f]{2})|(?<=\\\\[nrtbf])|(?<=\\\\u[0-9a-f]{4})|(?<=&#?[0-9a-z]+;))';
  const after = '(?![\\p{L}\\p{N}_-]|\\.[\\p{L}\\p{N}]|%2e[\\p{L}\\p{N}])';
  return `${before}(?:${source})${after}`;
}

/**
 * PostgreSQL's regex engine slows down far more than linearly with the size of a pattern: the
 * encoded forms are tried in groups of this many addresses, and only on text that may hold one
 * (see `marker`).
 */
const GROUP = 8;

/**
 * Text that may hold an address with an encoded character: its `@` encoded, or an encoded
 * character in the same run of non-space characters as a plain `@` (a URL's `%2F` elsewhere
 * in a body does not count). Null when the encodings are all plain.
 */
function markerSource(encodings: readonly Encoding[]): string | null {
  const markers = encodings.flatMap((e) => (e.marker ? [e.marker] : []));
  if (markers.length === 0) return null;
  const at = encodings.filter((e) => e.marker).flatMap((e) => e.forms('@', ['40']));
  const any = `(?:${markers.join('|')})`;
  return `${at.join('|')}|${any}[^\\s"'<>]*@|@[^\\s"'<>]*${any}`;
}

/** Patterns for the addresses in the encodings given, all used case-insensitively (`~*`, `i`). */
export function addressPatterns(addresses: readonly string[], encodings: readonly Encoding[]) {
  const plain = encodings.filter((e) => !e.marker);
  const groups: string[] = [];
  for (let start = 0; start < addresses.length; start += GROUP) {
    groups.push(
      addresses
        .slice(start, start + GROUP)
        .map((address) => addressSource(address, encodings))
        .join('|'),
    );
  }
  return {
    /** PostgreSQL: the addresses in their plain forms (no boundaries: finds a superset of rows). */
    plain: addresses.map((address) => addressSource(address, plain)).join('|'),
    /** PostgreSQL: text that may hold an encoded form, or null when the encodings are all plain. */
    marker: markerSource(encodings),
    /** PostgreSQL: the addresses in every form, a few at a time. */
    groups,
    /** JavaScript, for rewriting: exactly the occurrences that are one of the addresses. */
    exact: new RegExp(bounded(addresses.map((address) => addressSource(address, encodings)).join('|')), 'giu'),
  };
}
