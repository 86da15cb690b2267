import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../../server/services/automations/graph.js';

describe('durations as Resend writes them', () => {
  it('read words, plurals, several parts, and the letters of share links', () => {
    expect(parseDuration('30 minutes')).toBe(30 * 60_000);
    expect(parseDuration('1 day, 12 hours')).toBe(36 * 3_600_000);
    expect(parseDuration('10m')).toBe(10 * 60_000);
    expect(parseDuration('48h')).toBe(48 * 3_600_000);
    expect(parseDuration('1d 2h')).toBe(26 * 3_600_000);
    expect(parseDuration('2 w')).toBe(14 * 86_400_000);
  });

  it('refuse anything else', () => {
    for (const text of ['', 'soon', '10', '10 months', '10mo', 'h', '1 hour ago', 'x'.repeat(101)])
      expect(parseDuration(text), text).toBeNull();
  });
});
