import { getEmailMetrics } from '../../../services/metrics/get-email-metrics.js';
import { defineRoute } from '../../route.js';
import { EMAIL_METRICS_EXAMPLE } from './metrics.examples.js';
import { presentEmailMetrics } from './metrics.presenter.js';
import { EmailMetricsQuerySchema, EmailMetricsSchema } from './metrics.schemas.js';

export const metricsRoutes = [
  defineRoute(
    {
      method: 'get',
      path: '/emails/metrics',
      operationId: 'getEmailMetrics',
      summary: "The team's email metrics over a range, in total and by period, domain, email or broadcast",
      tags: ['Emails'],
      permission: 'full_access',
      query: EmailMetricsQuerySchema,
      responses: { 200: EmailMetricsSchema },
      examples: { response: EMAIL_METRICS_EXAMPLE },
    },
    async ({ input, auth, deps }) => {
      const q = input.query;
      const metrics = await getEmailMetrics(
        deps.orm.em,
        auth.teamId,
        {
          startDate: q.start_date,
          endDate: q.end_date,
          timezone: q.timezone,
          granularity: q.granularity,
          metrics: q.metrics,
          dimensions: [...new Set(q.dimensions)],
          domainIds: q.domain_id,
          emailIds: q.email_id,
          broadcastIds: q.broadcast_id,
        },
        deps.clock(),
      );
      return presentEmailMetrics(metrics);
    },
  ),
];
