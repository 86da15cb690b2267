import { describe, expect, it } from 'vitest';
import { parseReceived } from '../../../../server/services/inbound/parse-received.js';

describe('parseReceived header map', () => {
  // Finding 7 of issue 33: `key in {}` mangled `constructor` and dropped `__proto__`.
  it('keeps fields named constructor, __proto__ and toString as plain values', async () => {
    const raw = Buffer.from(
      [
        'From: a@example.com',
        'To: b@example.net',
        'Subject: hi',
        'Constructor: first',
        'Constructor: second',
        '__proto__: polluted',
        'toString: text',
        '',
        'body',
        '',
      ].join('\r\n'),
    );
    const parsed = await parseReceived(raw);
    expect(parsed.parseError).toBeNull();
    expect(parsed.headers.constructor).toBe('first\nsecond');
    expect(Object.getOwnPropertyDescriptor(parsed.headers, '__proto__')?.value).toBe('polluted');
    expect(parsed.headers.tostring).toBe('text');
    expect(Object.keys(parsed.headers)).toEqual(
      expect.arrayContaining(['from', 'to', 'subject', 'constructor', '__proto__', 'tostring']),
    );
    expect(JSON.parse(JSON.stringify(parsed.headers))).toMatchObject({
      constructor: 'first\nsecond',
      tostring: 'text',
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  // Found by the listener fuzz test: PostgreSQL refuses U+0000 in text and jsonb, so such a message was answered 451 for ever.
  it('reads a NUL in any field as U+FFFD', async () => {
    const raw = Buffer.from('From: a@example.com\r\nSubject: a\0b\r\nX-\0: c\0\r\n\r\nt\0\r\n', 'latin1');
    const parsed = await parseReceived(raw);
    expect(parsed).toMatchObject({ subject: 'a\uFFFDb', text: 't\uFFFD\n', parseError: null });
    expect(parsed.headers['x-\uFFFD']).toBe('c\uFFFD');
  });
});
