import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Mailbox, parseMailbox, splitFormatted } from '../../../../server/mail/address.js';

const parsed = (input: string) => {
  const result = parseMailbox(input);
  if (typeof result === 'string') throw new Error(`${JSON.stringify(input)} refused: ${result}`);
  return result;
};

describe('parseMailbox properties', () => {
  it('accepts every generated address unchanged', () => {
    fc.assert(
      fc.property(fc.emailAddress(), (address) => {
        expect(parsed(address)).toEqual({ name: null, address, formatted: address });
        expect(splitFormatted(address)).toEqual({ name: null, address });
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips a display name through the canonical form, and the canonical form is stable', () => {
    const name = fc
      .string({ minLength: 1, maxLength: 40 })
      .filter((s) => s.trim() === s && s.trim().length > 0 && !/[@\u0000-\u001f\u007f\ud800-\udfff]/.test(s));
    fc.assert(
      fc.property(name, fc.emailAddress(), (displayName, address) => {
        const quoted = `"${displayName.replace(/(["\\])/g, '\\$1')}" <${address}>`;
        const first: Mailbox = parsed(quoted);
        expect(first.address).toBe(address);
        expect(first.name).toBe(displayName.replace(/\s+/g, ' '));
        expect(parsed(first.formatted)).toEqual(first);
        expect(splitFormatted(first.formatted)).toEqual({ name: first.name, address: first.address });
      }),
      { numRuns: 1000 },
    );
  });

  it('never lets a line break or control character through', () => {
    const control = fc.constantFrom('\r', '\n', '\r\n', '\u0000', '\u000b', '\u001b', '\u007f');
    fc.assert(
      fc.property(fc.emailAddress(), control, fc.nat(), fc.emailAddress(), (address, breaker, at, other) => {
        const position = at % (address.length + 1);
        const injected = `${address.slice(0, position)}${breaker}Bcc: ${other}${address.slice(position)}`;
        expect(typeof parseMailbox(injected)).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });
});
