import { describe, expect, it } from 'vitest';
import { isUuid, newId } from '../../../../server/db/ids.js';

/** The 48-bit Unix millisecond time at the front of a UUID v7. */
const millisOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('newId', () => {
  it('makes RFC 9562 version 7 UUIDs with the current millisecond in front', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after);
  });

  it('makes ids that sort in the order they were made, within a millisecond too', () => {
    const ids = Array.from({ length: 1_000 }, () => newId());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
