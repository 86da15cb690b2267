import type { EmailMetrics } from '../../../services/metrics/get-email-metrics.js';

export function presentEmailMetrics(metrics: EmailMetrics) {
  return {
    object: 'metrics' as const,
    start_date: metrics.startDate.toISOString(),
    end_date: metrics.endDate.toISOString(),
    metrics: metrics.metrics,
    dimensions: metrics.dimensions,
    granularity: metrics.granularity,
    totals: metrics.totals,
    ...(metrics.data
      ? {
          data: metrics.data.map((row) => ({
            ...(row.period !== undefined ? { period: row.period } : {}),
            ...(row.domainId !== undefined ? { domain_id: row.domainId } : {}),
            ...(row.domainName !== undefined ? { domain_name: row.domainName } : {}),
            ...(row.emailId !== undefined ? { email_id: row.emailId } : {}),
            ...(row.broadcastId !== undefined ? { broadcast_id: row.broadcastId } : {}),
            ...(row.broadcastName !== undefined ? { broadcast_name: row.broadcastName } : {}),
            ...row.values,
          })),
        }
      : {}),
  };
}
