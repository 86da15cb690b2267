import type * as v from 'valibot';
import type { EmailMetricsSchema } from './metrics.schemas.js';

export const EMAIL_METRICS_EXAMPLE: v.InferInput<typeof EmailMetricsSchema> = {
  object: 'metrics',
  start_date: '2026-07-01T00:00:00.000Z',
  end_date: '2026-07-03T00:00:00.000Z',
  metrics: ['sent', 'delivered', 'delivery_rate'],
  dimensions: ['period'],
  granularity: 'daily',
  totals: { sent: 200, delivered: 196, delivery_rate: 0.98 },
  data: [
    { period: '2026-07-01T00:00:00+00:00', sent: 120, delivered: 118, delivery_rate: 118 / 120 },
    { period: '2026-07-02T00:00:00+00:00', sent: 80, delivered: 78, delivery_rate: 0.975 },
  ],
};
