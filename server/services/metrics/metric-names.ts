/** The counters the hourly rollup keeps (`email_metrics_hourly`), in Resend's names. */
export const COUNTED_METRICS = [
  'received',
  'sent',
  'delivered',
  'delivery_delayed',
  'failed',
  'bounced_permanent',
  'bounced_transient',
  'bounced_undetermined',
  'complained',
  'opened',
  'unique_opened',
  'clicked',
  'unique_clicked',
  'unsubscribed',
  'suppressed',
] as const;
export type CountedMetric = (typeof COUNTED_METRICS)[number];

/** Every metric of Resend's definition, in its order. */
export const EMAIL_METRICS = [
  'received',
  'delivered',
  'complained',
  'suppressed',
  'bounced',
  'bounced_transient',
  'bounced_permanent',
  'bounced_undetermined',
  'opened',
  'clicked',
  'unsubscribed',
  'delivery_delayed',
  'failed',
  'sent',
  'unique_opened',
  'unique_clicked',
  'delivery_rate',
  'open_rate',
  'click_rate',
  'bounce_rate',
  'complaint_rate',
  'unsubscribe_rate',
] as const;
export type EmailMetric = (typeof EMAIL_METRICS)[number];

export const METRIC_DIMENSIONS = ['period', 'domain', 'email', 'broadcast'] as const;
export type MetricDimension = (typeof METRIC_DIMENSIONS)[number];

export const METRIC_GRANULARITIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type MetricGranularity = (typeof METRIC_GRANULARITIES)[number];

export type Counts = Record<CountedMetric, number>;

/** Each rate: numerator over denominator, 0 when nothing was in the denominator. */
export const RATES = {
  delivery_rate: ['delivered', 'sent'],
  open_rate: ['unique_opened', 'delivered'],
  click_rate: ['unique_clicked', 'delivered'],
  bounce_rate: ['bounced', 'sent'],
  complaint_rate: ['complained', 'delivered'],
  unsubscribe_rate: ['unsubscribed', 'delivered'],
} as const;

/** Every metric from the counters: `bounced` is the three kinds together, rates are fractions (0–1). */
export function metricValues(counts: Counts, wanted: readonly EmailMetric[]): Partial<Record<EmailMetric, number>> {
  const all: Record<string, number> = {
    ...counts,
    bounced: counts.bounced_permanent + counts.bounced_transient + counts.bounced_undetermined,
  };
  for (const [rate, [num, den]] of Object.entries(RATES)) all[rate] = all[den]! === 0 ? 0 : all[num]! / all[den]!;
  return Object.fromEntries(wanted.map((m) => [m, all[m]!]));
}
