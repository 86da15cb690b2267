import * as v from 'valibot';
import { EMAIL_METRICS, METRIC_DIMENSIONS, METRIC_GRANULARITIES } from '../../../services/metrics/metric-names.js';
import { UuidSchema } from '../../schemas/common.schemas.js';

/**
 * A list parameter as Resend takes it: comma-separated, the parameter repeated, or both; at most
 * `max` items, each checked by `item`.
 */
const listParam = <S extends v.GenericSchema<string, string>>(item: S, max: number) =>
  v.optional(
    v.pipe(
      v.union([v.string(), v.pipe(v.array(v.string()), v.maxLength(max * 2))]),
      v.transform((value) =>
        (Array.isArray(value) ? value : [value])
          .flatMap((part) => part.split(','))
          .map((part) => part.trim())
          .filter(Boolean),
      ),
      v.maxLength(max, `must hold at most ${max} items`),
      v.array(item),
    ),
    [],
  );

export const EmailMetricsQuerySchema = v.object({
  start_date: v.optional(v.pipe(v.string(), v.maxLength(40))),
  end_date: v.optional(v.pipe(v.string(), v.maxLength(40))),
  timezone: v.optional(v.pipe(v.string(), v.maxLength(64)), 'UTC'),
  granularity: v.optional(
    v.picklist(METRIC_GRANULARITIES, `must be one of ${METRIC_GRANULARITIES.join(', ')}`),
    'daily',
  ),
  metrics: listParam(v.picklist(EMAIL_METRICS, 'must be metric names of GET /emails/metrics'), EMAIL_METRICS.length),
  dimensions: listParam(v.picklist(METRIC_DIMENSIONS, `must be among ${METRIC_DIMENSIONS.join(', ')}`), 4),
  domain_id: listParam(UuidSchema, 100),
  email_id: listParam(UuidSchema, 100),
  broadcast_id: listParam(UuidSchema, 100),
});

const metricEntries = Object.fromEntries(EMAIL_METRICS.map((m) => [m, v.optional(v.number())])) as {
  [M in (typeof EMAIL_METRICS)[number]]: v.OptionalSchema<v.NumberSchema<undefined>, undefined>;
};

export const EmailMetricsRowSchema = v.object({
  period: v.optional(v.string()),
  domain_id: v.optional(UuidSchema),
  domain_name: v.optional(v.string()),
  email_id: v.optional(UuidSchema),
  broadcast_id: v.optional(UuidSchema),
  broadcast_name: v.optional(v.string()),
  ...metricEntries,
});

export const EmailMetricsSchema = v.pipe(
  v.object({
    object: v.literal('metrics'),
    start_date: v.string(),
    end_date: v.string(),
    metrics: v.array(v.picklist(EMAIL_METRICS)),
    dimensions: v.array(v.picklist(METRIC_DIMENSIONS)),
    granularity: v.picklist(METRIC_GRANULARITIES),
    totals: v.object(metricEntries),
    data: v.optional(v.array(EmailMetricsRowSchema)),
  }),
  v.metadata({ title: 'EmailMetrics' }),
);
