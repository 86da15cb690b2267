import type * as v from 'valibot';
import type { UsageSchema } from './usage.schemas.js';

/** A team on the pro plan, part-way through its monthly period. */
export const USAGE: v.InferInput<typeof UsageSchema> = {
  object: 'usage',
  plan: 'pro',
  limits: { emails_per_month: 50_000, domains: 1_000, contacts: null },
  cloud: false,
  accepted_today: 1_917,
  period: {
    emails_sent: 18_402,
    included: 50_000,
    overage_enabled: false,
    overage_usd_per_1k: 0.9,
    starts_at: '2026-11-01T00:00:00.000Z',
    ends_at: '2026-12-01T00:00:00.000Z',
  },
};
