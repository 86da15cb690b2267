import { age, defineStatusSection, needsDatabase, type StatusView } from './status-section.js';

export interface EndpointBacklog {
  id: string;
  team_id: string;
  url: string;
  status: 'enabled' | 'disabled';
  /** Deliveries waiting for their first attempt, or being attempted now. */
  pending: number;
  /** Deliveries that failed and wait for another attempt. */
  failing: number;
  /** Exhausted deliveries since the endpoint's last success (20 disable it). */
  exhausted_in_a_row: number;
  oldest_seconds: number;
}

export const webhookBacklogSection = defineStatusSection<EndpointBacklog[] | null>({
  name: 'webhooks',
  title: 'Webhook backlog',
  async collect({ orm }) {
    if (!orm) return null;
    const rows = await orm.em
      .fork()
      .getConnection()
      .execute<(Omit<EndpointBacklog, 'oldest_seconds'> & { oldest: number | null })[]>(
        `SELECT e.id, e.team_id, e.url, e.status, e.consecutive_exhausted AS exhausted_in_a_row,
                count(d.id) FILTER (WHERE d.status IN ('pending', 'sending'))::int AS pending,
                count(d.id) FILTER (WHERE d.status = 'retry')::int AS failing,
                extract(epoch FROM now() - min(d.queued_at))::float AS oldest
           FROM webhook_endpoint e
           LEFT JOIN webhook_delivery d ON d.endpoint_id = e.id AND d.status IN ('pending', 'sending', 'retry')
          GROUP BY e.id
         HAVING count(d.id) > 0 OR e.status = 'disabled' OR e.consecutive_exhausted > 0
          ORDER BY e.status DESC, count(d.id) DESC, e.id
          LIMIT 50`,
      );
    return rows.map(({ oldest, ...row }) => ({ ...row, oldest_seconds: Math.max(0, Math.round(oldest ?? 0)) }));
  },
  view(endpoints): StatusView {
    if (endpoints === null) return needsDatabase;
    const disabled = endpoints.filter((e) => e.status === 'disabled').length;
    const failing = endpoints.filter((e) => e.failing > 0 || e.exhausted_in_a_row > 0).length;
    const waiting = endpoints.reduce((n, e) => n + e.pending + e.failing, 0);
    return {
      state: disabled > 0 ? 'fail' : failing > 0 ? 'warn' : 'ok',
      summary:
        endpoints.length === 0
          ? 'no backlog'
          : `${waiting} deliveries waiting; ${failing} endpoints failing, ${disabled} disabled`,
      table:
        endpoints.length === 0
          ? undefined
          : {
              columns: ['ENDPOINT', 'STATUS', 'PENDING', 'FAILING', 'EXHAUSTED', 'OLDEST'],
              rows: endpoints.map((e) => [
                e.url,
                e.status,
                String(e.pending),
                String(e.failing),
                String(e.exhausted_in_a_row),
                age(e.oldest_seconds),
              ]),
            },
    };
  },
});
