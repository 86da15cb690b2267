import { dueStepFigures } from '../services/automations/automation-figures.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MikroORM } from '@mikro-orm/postgresql';
import { topGroups } from '../services/queue/top-groups.js';

/** Direct delivery's gauges are labelled by MX group: only this many groups, the suspended and most deferred first. */
export const MX_GROUPS_SHOWN = 20;

/**
 * What `GET /metrics` shows, in Prometheus' text format. Counters are per process (Prometheus sums
 * them across processes); gauges of the outbox and the job queue are read from the database at
 * scrape time, so any one process reports them for all.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'postlane_http_requests_total',
    help: 'HTTP requests by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'postlane_http_request_duration_seconds',
    help: 'HTTP request latency by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly sendAttempts = new Counter({
    name: 'postlane_email_send_attempts_total',
    help: "Attempts to hand an email to a provider, by region and outcome (sent, retrying, failed, superseded; requeued: the batch's send timeout came first, so it was never handed over).",
    labelNames: ['region', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly providerErrors = new Counter({
    name: 'postlane_provider_errors_total',
    help: 'Provider failures by region and kind (transient: retried; permanent: the email failed).',
    labelNames: ['region', 'kind'] as const,
    registers: [this.registry],
  });

  readonly ingestedNotifications = new Counter({
    name: 'postlane_ingested_notifications_total',
    help: 'Provider notifications posted to /ingest/ses and /ingest/dsn (refused: a 4xx), and bounce reports delivered to VERP return paths (source verp; dropped: forged, not a report, or for no email), by source and outcome.',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly apiLogRowsDropped = new Counter({
    name: 'postlane_api_log_rows_dropped_total',
    help: 'API log rows not written, by reason (refused: PostgreSQL refused the row itself; overflow: the buffer filled while the database was away).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly automationRuns = new Counter({
    name: 'postlane_automation_runs_total',
    help: 'Automation runs by status: started (an event triggered one), and completed, failed or cancelled as the step engine ended them (stop and contact deletion cancel in SQL, and are not counted here).',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly automationSteps = new Counter({
    name: 'postlane_automation_steps_total',
    help: 'Automation steps the engine executed (each claim of a due step row).',
    registers: [this.registry],
  });

  /** `jobBacklog` is health's backlog query, passed in so that metrics (used by every service) imports none. */
  constructor(deps: {
    orm: MikroORM;
    jobBacklog: () => Promise<{ name: string; due: number; oldest_due_seconds: number }[]>;
    /** What "now" is for suspensions and connection leases (injected by tests). */
    clock?: () => Date;
  }) {
    const clock = deps.clock ?? (() => new Date());
    collectDefaultMetrics({ register: this.registry, prefix: 'postlane_' });
    const outbox = new Gauge({
      name: 'postlane_outbox_emails',
      help: 'Emails not yet settled, by status (queued includes scheduled and retrying mail).',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        const rows = await deps.orm.em.getConnection().execute<{ status: string; n: number }[]>(
          // Each status spelled out, so the partial index on those rows answers (not a scan of every email).
          `SELECT 'queued' AS status, (SELECT count(*) FROM email WHERE status = 'queued')::int AS n
           UNION ALL SELECT 'sending', (SELECT count(*) FROM email WHERE status = 'sending')::int`,
        );
        for (const row of rows) outbox.set({ status: row.status }, row.n);
      },
    });
    const webhookDeliveries = new Gauge({
      name: 'postlane_webhook_deliveries',
      help: 'Webhook deliveries kept (within POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS), by status: pending, sending, retry, delivered, exhausted.',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        webhookDeliveries.reset();
        const rows = await deps.orm.em
          .getConnection()
          .execute<{ status: string; n: number }[]>(
            'SELECT status, count(*)::int AS n FROM webhook_delivery GROUP BY status',
          );
        for (const row of rows) webhookDeliveries.set({ status: row.status }, row.n);
      },
    });
    const webhookEndpoints = new Gauge({
      name: 'postlane_webhook_endpoints',
      help: 'Webhook endpoints by status: enabled, disabled (by hand, or automatically after consecutive exhausted deliveries).',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        webhookEndpoints.reset();
        const rows = await deps.orm.em
          .getConnection()
          .execute<{ status: string; n: number }[]>(
            'SELECT status, count(*)::int AS n FROM webhook_endpoint GROUP BY status',
          );
        for (const status of ['enabled', 'disabled']) webhookEndpoints.set({ status }, 0);
        for (const row of rows) webhookEndpoints.set({ status: row.status }, row.n);
      },
    });
    const stepsDue = new Gauge({
      name: 'postlane_automation_steps_due',
      help: 'Automation steps due now and not yet executed (delays ended, waits timed out, steps just reached).',
      registers: [this.registry],
    });
    new Gauge({
      name: 'postlane_automation_oldest_due_seconds',
      help: 'How long the oldest due automation step has been due (0 when none is).',
      registers: [this.registry],
      async collect() {
        const { due, oldestSeconds } = await dueStepFigures(deps.orm);
        stepsDue.set(due);
        this.set(oldestSeconds);
      },
    });
    // One query per scrape for the three gauges: prom-client collects them concurrently, so the
    // in-flight answer is shared, and dropped once it settles (the next scrape asks anew).
    let scrape: ReturnType<typeof topGroups> | null = null;
    const groups = () =>
      (scrape ??= topGroups({ orm: deps.orm, clock }, MX_GROUPS_SHOWN).finally(() => {
        scrape = null;
      }));
    const byGroup = (
      name: string,
      help: string,
      value: (group: Awaited<ReturnType<typeof topGroups>>[number]) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['mx_group'] as const,
        registers: [this.registry],
        async collect() {
          const rows = await groups();
          this.reset();
          for (const group of rows) this.set({ mx_group: group.mx_group }, value(group));
        },
      });
    byGroup(
      'postlane_mx_group_suspended',
      `Direct delivery: 1 while an MX group is suspended from any source IP, else 0; only the ${MX_GROUPS_SHOWN} groups most worth watching (suspended first, then most deferrals).`,
      (group) => group.suspended,
    );
    byGroup(
      'postlane_mx_group_connections',
      'Direct delivery: connections open to an MX group now, over every worker host and source IP (the same groups).',
      (group) => group.connections,
    );
    byGroup(
      'postlane_mx_group_deferrals',
      'Direct delivery: "slow down" replies an MX group has given, in total over source IPs (the same groups).',
      (group) => group.deferrals,
    );
    const due = new Gauge({
      name: 'postlane_jobs_due',
      help: 'Due jobs not yet picked up, by job type; `emails`: due emails no drain run has claimed yet.',
      labelNames: ['job'] as const,
      registers: [this.registry],
    });
    new Gauge({
      name: 'postlane_jobs_oldest_due_seconds',
      help: 'Age of the oldest due job not yet picked up, by job type (`emails`: the oldest due email not yet claimed).',
      labelNames: ['job'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        due.reset();
        for (const job of await deps.jobBacklog()) {
          due.set({ job: job.name }, job.due);
          this.set({ job: job.name }, job.oldest_due_seconds);
        }
      },
    });
  }
}
