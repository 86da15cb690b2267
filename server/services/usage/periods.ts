/** Quotas run on UTC days and calendar months (UTC), whatever the server's time zone. */
const DAY_MS = 86_400_000;

export const utcDay = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
export const nextUtcDay = (at: Date) => new Date(utcDay(at).getTime() + DAY_MS);
export const utcMonth = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
export const nextUtcMonth = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
/** `YYYY-MM-DD`, as Postgres `date` columns take it. */
export const isoDate = (at: Date) => at.toISOString().slice(0, 10);
export const secondsUntil = (from: Date, to: Date) => Math.max(1, Math.ceil((to.getTime() - from.getTime()) / 1000));
