import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../config/index.js';
import { jobDefinitions } from '../../../../server/jobs/index.js';
import {
  ratesOf,
  regionLines,
  teamLines,
  windowStartDay,
} from '../../../../server/services/deliverability/deliverability-lines.js';

const config = (env: Record<string, string> = {}) =>
  loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: 'postgres://x@127.0.0.1/x', ...env });

describe('deliverability lines', () => {
  it("default to Amazon SES's review and pause lines, as fractions", () => {
    expect(teamLines(config())).toEqual({
      bounce_rate: { warning: 0.05, pause: 0.1 },
      complaint_rate: { warning: 0.001, pause: 0.005 },
    });
    expect(regionLines(config())).toEqual({ bounce_rate: 0.05, complaint_rate: 0.001 });
  });

  it('refuse a pause line at or under its warning line, and a percentage that is not one', () => {
    expect(() => config({ POSTLANE_BOUNCE_WARNING_PERCENT: '10', POSTLANE_BOUNCE_PAUSE_PERCENT: '10' })).toThrow(
      /POSTLANE_BOUNCE_PAUSE_PERCENT/,
    );
    expect(() => config({ POSTLANE_COMPLAINT_PAUSE_PERCENT: '0.05' })).toThrow(/POSTLANE_COMPLAINT_PAUSE_PERCENT/);
    expect(() => config({ POSTLANE_BOUNCE_WARNING_PERCENT: '5%' })).toThrow(/POSTLANE_BOUNCE_WARNING_PERCENT/);
    expect(config({ POSTLANE_COMPLAINT_WARNING_PERCENT: '0.08' }).POSTLANE_COMPLAINT_WARNING_PERCENT).toBe(0.08);
  });

  it('judge no rate below the minimum volume', () => {
    const c = config({ POSTLANE_DELIVERABILITY_MIN_VOLUME: '100' });
    expect(ratesOf(c, { sent: 99, bounced: 50, complained: 1 })).toEqual({ bounce_rate: null, complaint_rate: null });
    expect(ratesOf(c, { sent: 300, bounced: 16, complained: 1 })).toEqual({
      bounce_rate: 0.053333,
      complaint_rate: 0.003333,
    });
  });

  it('take the window as today and the days before it, in UTC', () => {
    expect(windowStartDay(config(), new Date('2026-12-03T23:59:59Z'))).toBe('2026-11-27');
    expect(windowStartDay(config({ POSTLANE_DELIVERABILITY_WINDOW_DAYS: '1' }), new Date('2026-12-03T00:00:00Z'))).toBe(
      '2026-12-03',
    );
  });

  it('are judged again by a recurring job every POSTLANE_DELIVERABILITY_CHECK_SECONDS, on every worker', () => {
    const job = jobDefinitions.find((j) => j.name === 'deliverability.check');
    expect(job?.every?.(config({ POSTLANE_DELIVERABILITY_CHECK_SECONDS: '90' }))).toBe(90_000);
  });
});
