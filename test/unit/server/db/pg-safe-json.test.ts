import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pgSafeJson } from '../../../../server/db/pg-safe-json.js';
import { LONE_SURROGATE } from '../../../../server/mail/address.js';

const safe = (value: unknown) => JSON.parse(pgSafeJson(JSON.stringify(value)));

describe('pgSafeJson', () => {
  it('replaces NUL and lone surrogates, in values and keys, with U+FFFD', () => {
    expect(safe({ 'k\u0000': ['a\u0000b', '\ud800', 'x\udfffy', '\udbff\udbff'] })).toEqual({
      'k\uFFFD': ['a\uFFFDb', '\uFFFD', 'x\uFFFDy', '\uFFFD\uFFFD'],
    });
  });

  it('keeps escaped backslashes, paired surrogates and other control characters as they were', () => {
    const kept = { text: '\\u0000 \\\\ud800 😀 \u0001\t\n', '\\u0000': 1 };
    expect(pgSafeJson(JSON.stringify(kept))).toBe(JSON.stringify(kept));
  });

  it('equals replacing each refused character in the value itself', () => {
    const lone = new RegExp(LONE_SURROGATE.source, 'g');
    const fixed = (text: string) => text.replace(/\u0000/g, '\uFFFD').replace(lone, '\uFFFD');
    const expected = (value: unknown): unknown =>
      typeof value === 'string'
        ? fixed(value)
        : Array.isArray(value)
          ? value.map(expected)
          : value && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [fixed(k), expected(v)]))
            : value;
    const unit = fc.constantFrom('a', 'u', '0', 'd', '8', '\\', '"', '\u0000', '\ud800', '\udc00', '😀', '\u0001');
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: unit }), (value) => {
        expect(safe(value)).toEqual(JSON.parse(JSON.stringify(expected(value))));
      }),
      { numRuns: 1000, seed: 20261207 },
    );
  });
});
