import type { AttemptResult } from './post-webhook.js';

/** Delays before each retry (spec: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, about 18 h in all); one attempt first. */
export const WEBHOOK_RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000] as const;
/** A delivery not done this long after queueing is dropped without another attempt. */
export const WEBHOOK_MAX_AGE_MS = 24 * 3600 * 1000;
/** A 429's Retry-After is honoured up to this long. */
export const WEBHOOK_RETRY_AFTER_CAP_SECONDS = 3600;
/** Per endpoint (spec, Delivery). */
export const WEBHOOK_MAX_IN_FLIGHT = 8;
export const WEBHOOK_RATE_PER_SECOND = 50;
/** Owners are emailed when this many settled deliveries in a row exhausted; the endpoint is disabled at the second figure. */
export const WEBHOOK_FAILING_NOTICE_AFTER = 10;
export const WEBHOOK_DISABLE_AFTER = 20;

export type DeliveryOutcome =
  | { status: 'delivered'; counted: true }
  | { status: 'retry'; dueAt: Date; counted: boolean }
  | { status: 'exhausted'; counted: boolean; reason: string };

/** Seconds to wait from a Retry-After value (delta-seconds or an HTTP-date), or null when it is neither. */
export function retryAfterSeconds(value: string | null, now: Date): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** The deadline a delivery queued at `queuedAt` must meet. */
export const expiresAt = (queuedAt: Date) => new Date(queuedAt.getTime() + WEBHOOK_MAX_AGE_MS);

/**
 * What happens after one attempt: delivered on any 2xx; a 429 with a usable Retry-After waits
 * (capped at an hour) without using up an attempt; anything else takes the next delay of the
 * schedule, until the schedule or the 24-hour window runs out.
 */
export function decideOutcome(
  delivery: { attempts: number; queuedAt: Date },
  result: AttemptResult,
  now: Date,
): DeliveryOutcome {
  if (result.errorClass === null) return { status: 'delivered', counted: true };
  const deadline = expiresAt(delivery.queuedAt).getTime();
  if (result.statusCode === 429) {
    const wait = retryAfterSeconds(result.retryAfter, now);
    if (wait !== null) {
      const dueAt = new Date(now.getTime() + Math.min(wait, WEBHOOK_RETRY_AFTER_CAP_SECONDS) * 1000);
      return dueAt.getTime() < deadline
        ? { status: 'retry', dueAt, counted: false }
        : { status: 'exhausted', counted: false, reason: 'retry-after beyond 24 hours after queueing' };
    }
  }
  const delay = WEBHOOK_RETRY_DELAYS_SECONDS[delivery.attempts];
  if (delay === undefined) return { status: 'exhausted', counted: true, reason: 'all attempts failed' };
  const dueAt = new Date(now.getTime() + delay * 1000);
  if (dueAt.getTime() >= deadline)
    return { status: 'exhausted', counted: true, reason: 'next attempt would be more than 24 hours after queueing' };
  return { status: 'retry', dueAt, counted: true };
}
