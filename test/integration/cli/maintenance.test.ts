import { beforeAll, describe, expect, it } from 'vitest';
import { MAINTENANCE_TASKS } from '../../../server/services/maintenance/run-maintenance.js';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';

const sql = (query: string, bindings: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute(query, bindings);
const count = async (table: string) => Number((await sql(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
const maintenance = async () => {
  const result = await runPostlane(['maintenance', 'run', '--json'], { DATABASE_URL: app.databaseUrl });
  return {
    code: result.code,
    output: result.output,
    tasks: Object.fromEntries(JSON.parse(result.stdout).tasks.map((t: { task: string }) => [t.task, t])),
  };
};

const app = useTestApp();
beforeAll(async () => {
  const [email] = await sql(
    `INSERT INTO email (id, created_at, updated_at, team_id, "from", "to", cc, bcc, reply_to, subject, region, message_id, status, last_event, send_after)
     VALUES (gen_random_uuid(), now(), now(), ?, 'a@acme.test', '{reader@example.com}', '{}', '{}', '{}', 'clicked', 'us-east-1', '<m@acme.test>', 'sent', 'clicked', now()) RETURNING id`,
    [app.teamId],
  );
  const old = "now() - interval '40 days'";
  for (const age of [old, 'now()']) {
    await sql(
      `INSERT INTO api_log (id, created_at, team_id, method, endpoint, response_status, duration_ms) VALUES (gen_random_uuid(), ${age}, ?, 'GET', '/emails', 200, 1)`,
      [app.teamId],
    );
    await sql(
      `INSERT INTO captured_message (id, created_at, region, message_id, envelope_from, envelope_to, subject, raw) VALUES (gen_random_uuid(), ${age}, 'us-east-1', 'm', 'a@b.co', '{}', 's', 'raw')`,
    );
    await sql(
      `INSERT INTO idempotency_key (team_id, key, request_hash, state, created_at) VALUES (?, gen_random_uuid()::text, '\\x00', 'done', ${age})`,
      [app.teamId],
    );
    await sql(
      `INSERT INTO agenda_jobs (name, priority, type, next_run_at, last_finished_at, data) VALUES ('email.send', 0, 'normal', NULL, ${age}, '{}')`,
    );
    await sql(
      `INSERT INTO ingested_notification (source, message_id, topic, received_at) VALUES ('sns', gen_random_uuid()::text, 't', ${age})`,
    );
    await sql(
      `INSERT INTO tracking_click (id, created_at, email_id, link, clicked_at, outcome) VALUES (gen_random_uuid(), ${age}, ?, 'https://example.com', ${age}, 'clicked')`,
      [email!.id],
    );
    await sql(`INSERT INTO email_tracking (email_id, created_at) VALUES (gen_random_uuid(), ${age})`);
    const [received] = await sql(
      `INSERT INTO received_email (id, created_at, team_id, domain, envelope_from, received_for, peer_ip, helo, message_id, subject, "from", "to", cc, bcc, reply_to, raw, size, spf, dkim, dmarc)
       VALUES (gen_random_uuid(), ${age}, ?, 'in.test', '', '{desk@in.test}', '127.0.0.1', 'mx.test', '', 's', '', '{}', '{}', '{}', '{}', '\\x00', 1, '{}', '[]', '{}') RETURNING id`,
      [app.teamId],
    );
    await sql(
      `INSERT INTO received_attachment (id, created_at, email_id, position, content_type, size, content) VALUES (gen_random_uuid(), ${age}, ?, 0, 'text/plain', 1, '\\x00')`,
      [received!.id],
    );
  }
  // Two writers' slots of an hour past, folded into one row; the current hour's slot stays.
  for (const [hour, slot] of [
    ["date_trunc('hour', now()) - interval '3 hours'", 101],
    ["date_trunc('hour', now()) - interval '3 hours'", 102],
    ["date_trunc('hour', now())", 101],
  ] as const)
    await sql(
      `INSERT INTO email_metrics_hourly (team_id, hour, domain, broadcast_id, slot, sent) VALUES (?, ${hour}, 'acme.test', postlane_no_broadcast(), ${slot}, 2)`,
      [app.teamId],
    );
  // Neither finished nor one-off: kept whatever their age.
  await sql(
    `INSERT INTO agenda_jobs (name, priority, type, next_run_at, last_finished_at, data) VALUES ('email.send', 0, 'normal', now() + interval '1 day', ${old}, '{}')`,
  );
  await sql(
    `INSERT INTO agenda_jobs (name, priority, type, next_run_at, last_finished_at, repeat_interval, data) VALUES ('outbox.sweep', 0, 'single', NULL, ${old}, '60000', '{}')`,
  );
});

describe('postlane maintenance run', () => {
  it('purges what is past retention, keeps the rest, and is idempotent', async () => {
    const jobsBefore = await count('agenda_jobs');
    const first = await maintenance();
    expect(first.code, first.output).toBe(0);
    expect(first.tasks).toEqual({
      // The migration made the days ahead; a run after midnight UTC makes one more day of each table.
      email_partitions: { task: 'email_partitions', removed: expect.any(Number), error: null },
      email_retention: { task: 'email_retention', removed: 0, error: null },
      email_tracking: { task: 'email_tracking', removed: 1, error: null },
      idempotency_keys: { task: 'idempotency_keys', removed: 1, error: null },
      api_logs: { task: 'api_logs', removed: 1, error: null },
      webhook_deliveries: { task: 'webhook_deliveries', removed: 0, error: null },
      captured_mail: { task: 'captured_mail', removed: 1, error: null },
      received_mail: { task: 'received_mail', removed: 1, error: null },
      finished_jobs: { task: 'finished_jobs', removed: 1, error: null },
      ingested_notifications: { task: 'ingested_notifications', removed: 1, error: null },
      tracking_clicks: { task: 'tracking_clicks', removed: 1, error: null },
      automation_runs: { task: 'automation_runs', removed: 0, error: null },
      custom_events: { task: 'custom_events', removed: 0, error: null },
      metrics_rollup: { task: 'metrics_rollup', removed: 2, error: null },
    });
    expect(
      await sql(
        `SELECT slot, sent FROM email_metrics_hourly WHERE domain = 'acme.test' AND team_id = ? AND sent > 0 ORDER BY hour`,
        [app.teamId],
      ),
    ).toEqual([expect.objectContaining({ slot: 0, sent: '4' }), expect.objectContaining({ slot: 101, sent: '2' })]);
    const counts = [
      'api_log',
      'captured_message',
      'idempotency_key',
      'ingested_notification',
      'tracking_click',
      'received_email',
      'received_attachment',
    ];
    expect(await Promise.all(counts.map(count))).toEqual(counts.map(() => 1));
    expect(await count('agenda_jobs')).toBe(jobsBefore - 1);

    const again = await maintenance();
    expect(again.code).toBe(0);
    // Idempotent: every task of the second run finds nothing to remove.
    const removed = Object.values(again.tasks).map((t) => (t as { removed: number }).removed);
    expect(removed).toEqual(Object.keys(first.tasks).map(() => 0));
  });

  it('runs every task when one fails, reports it, and exits 1', async () => {
    await sql('ALTER TABLE captured_message RENAME TO captured_message_away');
    try {
      const run = await maintenance();
      expect(run.code).toBe(1);
      expect(run.tasks.captured_mail).toMatchObject({
        removed: null,
        error: expect.stringContaining('captured_message'),
      });
      expect(run.tasks.finished_jobs).toMatchObject({ removed: 0, error: null });
    } finally {
      await sql('ALTER TABLE captured_message_away RENAME TO captured_message');
    }
  });

  it('--help names every task of the registry', async () => {
    const help = await runPostlane(['maintenance', 'run', '--help'], {});
    expect(help.code, help.output).toBe(0);
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain(`The ${MAINTENANCE_TASKS.length} tasks:`);
    for (const task of MAINTENANCE_TASKS) expect(text).toContain(`${task.name} (`);
  });
});
