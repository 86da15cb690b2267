/**
 * Escapes that PostgreSQL refuses in `jsonb` (and in `text` read out of it): `\u0000`, and the
 * escaped lone surrogates `JSON.stringify` writes for strings that are not well-formed UTF-16.
 * Matched only when not itself escaped (preceded by an even run of backslashes).
 */
const REFUSED_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi;

/**
 * JSON text (from `JSON.stringify`) that PostgreSQL accepts as `jsonb`: each NUL and lone
 * surrogate, in values and keys alike, becomes U+FFFD; every other byte is kept. A well-formed
 * `JSON.stringify` writes paired surrogates as they are, so any surrogate escape it wrote is a lone one.
 */
export function pgSafeJson(json: string): string {
  return json.replace(REFUSED_ESCAPE, '$1\uFFFD');
}
