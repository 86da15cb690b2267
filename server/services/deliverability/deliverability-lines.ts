import type { Config } from '../../../config/index.js';
import type { DeliverabilityMetric } from '../../entities/index.js';

export interface Lines {
  /** Fractions (0.05 = 5%). */
  warning: number;
  pause: number;
}

/** A team's risk and pause lines per metric, from the settings (percent) as fractions. */
export function teamLines(config: Config): Record<DeliverabilityMetric, Lines> {
  return {
    bounce_rate: {
      warning: config.POSTLANE_BOUNCE_WARNING_PERCENT / 100,
      pause: config.POSTLANE_BOUNCE_PAUSE_PERCENT / 100,
    },
    complaint_rate: {
      warning: config.POSTLANE_COMPLAINT_WARNING_PERCENT / 100,
      pause: config.POSTLANE_COMPLAINT_PAUSE_PERCENT / 100,
    },
  };
}

/** The platform-wide line per metric, past which a region's broadcasts wait. */
export function regionLines(config: Config): Record<DeliverabilityMetric, number> {
  return {
    bounce_rate: config.POSTLANE_REGION_BOUNCE_PAUSE_PERCENT / 100,
    complaint_rate: config.POSTLANE_REGION_COMPLAINT_PAUSE_PERCENT / 100,
  };
}

/** Counts in a window, and the rates they make; a rate is null below the minimum volume (no verdict). */
export interface WindowCounts {
  sent: number;
  bounced: number;
  complained: number;
}

export function ratesOf(config: Config, counts: WindowCounts): Record<DeliverabilityMetric, number | null> {
  const judged = counts.sent >= config.POSTLANE_DELIVERABILITY_MIN_VOLUME;
  const rate = (n: number) => (judged ? Math.round((n / counts.sent) * 1e6) / 1e6 : null);
  return { bounce_rate: rate(counts.bounced), complaint_rate: rate(counts.complained) };
}

/**
 * The first UTC day inside the rolling window (today and the days before it, `window_days` in
 * all), as a `YYYY-MM-DD` string for SQL: rows on this day or later count.
 */
export function windowStartDay(config: Config, now: Date): string {
  const start = new Date(
    Date.UTC(
      now.getUTCFullYear(),
      now.getUTCMonth(),
      now.getUTCDate() - (config.POSTLANE_DELIVERABILITY_WINDOW_DAYS - 1),
    ),
  );
  return start.toISOString().slice(0, 10);
}
