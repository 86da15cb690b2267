/**
 * The instants a test whose outcome involves days or months runs at, on an injected clock (issue 21):
 * just after midnight UTC, noon, the last half hour of a day, and the last day of a month (short
 * and long, also the year's end). A test built on the real clock would pass or fail by the hour.
 */
export const CLOCK_INSTANTS = [
  '2026-03-10T00:05:00.000Z',
  '2026-03-10T12:00:00.000Z',
  '2026-03-10T23:30:00.000Z',
  '2026-02-28T23:30:00.000Z',
  '2026-12-31T12:00:00.000Z',
].map((iso) => new Date(iso));

/** Midnight UTC, `days` after the day of `at`. */
export const utcMidnightAfter = (at: Date, days: number) =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + days));
