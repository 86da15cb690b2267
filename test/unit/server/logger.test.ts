import { describe, expect, it } from 'vitest';
import { maskPath } from '../../../server/http/middleware/log-requests.js';
import { createLogger, maskAddresses } from '../../../server/logger.js';

describe('process logs hold no address', () => {
  it('masks addresses in every form a line can carry them, and leaves the rest', () => {
    expect(maskAddresses('failed for Erin+News@Ex-ample.co.uk: 550')).toBe('failed for [address]: 550');
    expect(maskAddresses('/contacts/Erin.X%40Example.com?x=1')).toBe('/contacts/[address]?x=1');
    expect(maskAddresses('a %65%72%69%6E%40%65%78%61%6d%70%6c%65%2e%63%6f%6d b')).toBe('a [address] b');
    expect(maskAddresses('{"m":"erin\\\\u0040example.com"}')).toBe('{"m":"[address]"}');
    expect(maskAddresses('jörg@bücher.example, <ann@x.io>')).toBe('[address], <[address]>');
    expect(maskAddresses('?email=ann@x.io&next=/a')).toBe('?email=[address]&next=/a');
    expect(maskAddresses('no address @ here, user@localhost, 50%')).toBe('no address @ here, user@localhost, 50%');
  });

  it('masks path segments that are addresses, in any encoding', () => {
    expect(maskPath('/contacts/erin%40example.com/topics')).toBe('/contacts/[address]/topics');
    expect(maskPath('/contacts/%65%72%69%6e%40%65%78%61%6d%70%6c%65%2e%63%6f%6d')).toBe('/contacts/[address]');
    expect(maskPath('/downloads/YQAAAAFp4ZfxQYDLS6O0TbqZvUJp')).toBe('/downloads/[token]');
    expect(maskPath('/shared/cwAAAAFp4ZfxQYDLS6O0TbqZvUJp')).toBe('/shared/[token]');
    expect(maskPath('/contacts/0190a2b4-7c1e-7000-8000-000000000000')).toBe(
      '/contacts/0190a2b4-7c1e-7000-8000-000000000000',
    );
    expect(maskPath('/contacts/%E0%A4%A')).toBe('/contacts/%E0%A4%A');
  });

  it('masks messages, fields and errors of every level as lines are written', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    logger.warn(
      { err: new Error('relay refused <ann@example.com>'), to: ['Ann <ANN%40example.com>'] },
      'could not send to ann@example.com',
    );
    logger.error({ detail: { nested: 'bob+x@example.org' } }, 'failed');
    const text = lines.join('');
    expect(text).not.toMatch(/example\.(com|org)/i);
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['could not send to [address]', 'failed']);
  });
});
