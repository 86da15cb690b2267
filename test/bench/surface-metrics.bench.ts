/**
 * `npm run bench -- --only surface-metrics`: email metrics and broadcast analytics at volume.
 *
 * A database of its own, migrated, with one team:
 *
 * - **Metrics.** `--emails` (10M) emails over the last 30 days, from three sender domains, a fifth
 *   of them in 20 broadcasts (each day's in one), and their events (sent for each, delivered 97 %, a bounce 2 % of three
 *   kinds, a complaint 0.1 %, opens 30 % (one in five twice), clicks 5 %), filled in SQL day by day.
 *   The fill runs with the metrics triggers off, then fills `email_metrics_hourly` from the same
 *   aggregate over the events, spread over `--slots` (16) writing backends per hour as a pool of
 *   that many connections leaves it (the triggers' exactness is the tests' business, not this
 *   one's). Measured: `GET /emails/metrics`'s service for a 30-day daily breakdown by period, by
 *   domain and in total, from the rollup, beside the same aggregate recomputed from the events in
 *   the same run (the baseline), and their ratio.
 * - **The triggers' cost on the write path**: 200 inserts of 500 `email.delivered` events, with
 *   the trigger and without it (the same rows), as a ratio.
 * - **Broadcast pages.** One broadcast of `--recipients` (1M) recipients in `broadcast_recipient`
 *   (the same shares as above, a tenth of the clickers on each of 20 links) and as many contacts, 1 %
 *   unsubscribed. Measured: a page of 100 of each type, the first and one from the middle (by
 *   cursor), a bounce-type filter, an address filter, and the clicked links.
 *
 *   node --import tsx test/bench/surface-metrics.bench.ts [--json] [--emails 10m] [--recipients 1m] [--reads 20] [--slots 16]
 */
import { RequestContext } from '@mikro-orm/core';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/index.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { sqlQuery } from '../../server/db/query.js';
import { createDeps } from '../../server/deps.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import {
  listBroadcastClickedLinks,
  listBroadcastRecipients,
  type RecipientType,
} from '../../server/services/broadcasts/broadcast-analytics.js';
import { compactMetricsRollup } from '../../server/services/metrics/compact-metrics-rollup.js';
import { type EmailMetricsQuery, getEmailMetrics } from '../../server/services/metrics/get-email-metrics.js';
import { COUNTED_METRICS } from '../../server/services/metrics/metric-names.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { reportHeadlines, targetMet } from './headline.js';

const TARGETS = { metricsMs: 100, pageMs: 50 };
const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    emails: { type: 'string', default: '10m' },
    recipients: { type: 'string', default: '1m' },
    reads: { type: 'string', default: '20' },
    slots: { type: 'string', default: '16' },
  },
});
const parseSize = (text: string) => {
  const match = /^(\d+)([km]?)$/i.exec(text.trim());
  if (!match) throw new Error(`${text} is not a count such as 500k or 10m`);
  return Number(match[1]) * ({ k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase()] ?? 1);
};
const EMAILS = parseSize(args.emails);
const RECIPIENTS = parseSize(args.recipients);
const READS = Number(args.reads);
const SLOTS = Number(args.slots);
const DAYS = 30;
const progress = (line: string) => process.stderr.write(`${line}\n`);
const timed = async (fn: () => Promise<unknown>) => {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;
const round = (n: number) => Number(n.toFixed(2));

const name = uniqueDatabaseName('postlane_bench_metrics');
await adminQuery(`CREATE DATABASE "${name}"`);
const config = loadConfig({
  POSTLANE_CONFIG: '/nonexistent/postlane.json',
  DATABASE_URL: databaseUrl(name),
  POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  POSTLANE_LOG_LEVEL: 'silent',
});
const results: Record<string, unknown> = { emails: EMAILS, recipients: RECIPIENTS };
try {
  await migrate(config);
  const orm = await initOrm(config);
  const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
  const run = <T>(fn: () => Promise<T>) => RequestContext.create(orm.em, fn);
  const sql = <T>(query: string, bindings: unknown[] = []) => run(() => sqlQuery<T>(orm.em, query, bindings));
  const team = await run(() => createTeam(deps, { name: 'Bench' }));
  const now = new Date();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const first = new Date(today.getTime() - (DAYS - 1) * 86_400_000);

  // ---- Fill: emails and events, day by day, the triggers off.
  await sql(`ALTER TABLE email DISABLE TRIGGER email_metrics_trigger`);
  await sql(`ALTER TABLE event DISABLE TRIGGER event_metrics_trigger`);
  for (const domain of ['acme.test', 'news.acme.test', 'shop.example']) {
    await sql(
      `INSERT INTO domain (id, created_at, updated_at, team_id, name, status, region, records)
       SELECT gen_random_uuid(), now(), now(), ?, ?, 'verified', 'us-east-1', '[]'`,
      [team.id, domain],
    );
  }
  const broadcasts: string[] = [];
  const fillStart = Date.now();
  const perDay = Math.ceil(EMAILS / DAYS);
  for (let day = 0; day < DAYS; day += 1) {
    const dayStart = new Date(first.getTime() + day * 86_400_000);
    await sql(
      `INSERT INTO email (id, created_at, team_id, "from", "to", cc, bcc, reply_to, subject, region, message_id, status, last_event, send_after, attempts, updated_at, broadcast_id, sent_at)
       SELECT gen_random_uuid(), ?::timestamptz + (i * (86400000.0 / ?)) * interval '1 millisecond', ?,
              (ARRAY['Acme <a@acme.test>', 'News <n@news.acme.test>', 'Shop <s@shop.example>'])[1 + i % 3],
              ARRAY['r' || i || '@example.com'], '{}', '{}', '{}', 'Hello', 'us-east-1', '<' || i || '@bench>', 'sent', 'delivered',
              now(), 1, now(),
              CASE WHEN i % 5 = 0 THEN ('00000000-0000-4000-8000-' || lpad((? % 20)::text, 12, '0'))::uuid END, now()
         FROM generate_series(0, ? - 1) AS i`,
      [dayStart, perDay, team.id, day, perDay],
    );
    // Each email's events a few minutes to hours after it; bounce kinds and links as the header says.
    await sql(
      `INSERT INTO event (id, created_at, team_id, email_id, type, payload)
       SELECT gen_random_uuid(), e.created_at + k.delay, e.team_id, e.id, k.type,
              jsonb_build_object('from', e."from") || CASE WHEN e.broadcast_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('broadcast_id', e.broadcast_id) END || k.extra
         FROM email e
         CROSS JOIN LATERAL (
           SELECT 'email.sent' AS type, interval '1 second' AS delay, '{}'::jsonb AS extra
           UNION ALL SELECT 'email.delivered', interval '5 seconds', '{}' WHERE hashtext(e.id::text) % 100 BETWEEN -96 AND 96
           UNION ALL SELECT 'email.bounced', interval '10 seconds', jsonb_build_object('bounce', jsonb_build_object('type', (ARRAY['Permanent', 'Transient', 'Undetermined'])[1 + abs(hashtext(e.id::text)) % 3]))
             WHERE abs(hashtext(e.id::text) % 100) >= 98
           UNION ALL SELECT 'email.complained', interval '1 hour', '{}' WHERE abs(hashtext(e.id::text) % 1000) = 7
           UNION ALL SELECT 'email.opened', interval '2 hours', '{}' WHERE abs(hashtext(e.id::text || 'o') % 10) < 3
           UNION ALL SELECT 'email.opened', interval '26 hours', '{}' WHERE abs(hashtext(e.id::text || 'o') % 10) = 0
           UNION ALL SELECT 'email.clicked', interval '3 hours', jsonb_build_object('click', jsonb_build_object('link', 'https://acme.test/l' || abs(hashtext(e.id::text)) % 20))
             WHERE abs(hashtext(e.id::text || 'o') % 20) = 1
         ) k
        WHERE e.team_id = ? AND e.created_at >= ? AND e.created_at < ?::timestamptz + interval '1 day'`,
      [team.id, dayStart, dayStart],
    );
    progress(`metrics fill: day ${day + 1}/${DAYS} (${Math.round((Date.now() - fillStart) / 1000)} s)`);
  }
  for (let b = 0; b < 20; b += 1) {
    const id = `00000000-0000-4000-8000-${String(b).padStart(12, '0')}`;
    broadcasts.push(id);
  }
  await sql(`ALTER TABLE email ENABLE TRIGGER email_metrics_trigger`);
  await sql(`ALTER TABLE event ENABLE TRIGGER event_metrics_trigger`);
  // The rollup, as the triggers leave it: each hour's counts (no retractions in this fill, so an
  // email's first open and click are its earliest) spread over SLOTS writing backends.
  const fillRollup = await timed(async () => {
    const plain = {
      sent: `e.type = 'email.sent'`,
      delivered: `e.type = 'email.delivered'`,
      bounced_permanent: `e.type = 'email.bounced' AND e.payload->'bounce'->>'type' = 'Permanent'`,
      bounced_transient: `e.type = 'email.bounced' AND e.payload->'bounce'->>'type' = 'Transient'`,
      bounced_undetermined: `e.type = 'email.bounced' AND e.payload->'bounce'->>'type' = 'Undetermined'`,
      complained: `e.type = 'email.complained'`,
      opened: `e.type = 'email.opened'`,
      clicked: `e.type = 'email.clicked'`,
      unique_opened: `e.type = 'email.opened' AND f.first_at IS NOT NULL`,
      unique_clicked: `e.type = 'email.clicked' AND f.first_at IS NOT NULL`,
    };
    // Integer division: the slots of a count add up to it exactly.
    const spread = (c: string) => `(${c}::bigint + slot) / ${SLOTS}`;
    await sql(
      `WITH f AS (SELECT email_id, type, min(created_at) AS first_at FROM event
                   WHERE team_id = ? AND type IN ('email.opened', 'email.clicked') GROUP BY 1, 2),
       t AS (
         SELECT date_trunc('hour', e.created_at, 'UTC') AS hour, postlane_sender_domain(e.payload->>'from') AS domain,
                coalesce((e.payload->>'broadcast_id')::uuid, postlane_no_broadcast()) AS broadcast_id,
                0::bigint AS received, ${Object.entries(plain)
                  .map(([c, w]) => `count(*) FILTER (WHERE ${w}) AS ${c}`)
                  .join(', ')}
           FROM event e LEFT JOIN f ON f.email_id = e.email_id AND f.type = e.type AND f.first_at = e.created_at
          WHERE e.team_id = ? GROUP BY 1, 2, 3
         UNION ALL
         SELECT date_trunc('hour', created_at, 'UTC'), postlane_sender_domain("from"), coalesce(broadcast_id, postlane_no_broadcast()),
                count(*), ${Object.keys(plain)
                  .map(() => '0')
                  .join(', ')}
           FROM email WHERE team_id = ? GROUP BY 1, 2, 3
       )
       INSERT INTO email_metrics_hourly (team_id, hour, domain, broadcast_id, slot, received, ${Object.keys(plain).join(', ')})
       SELECT ?, hour, domain, broadcast_id, slot, ${['received', ...Object.keys(plain)].map((c) => `${spread(`sum(${c})`)}`).join(', ')}
         FROM t CROSS JOIN generate_series(0, ${SLOTS - 1}) AS slot GROUP BY hour, domain, broadcast_id, slot`,
      [team.id, team.id, team.id, team.id],
    );
  });
  progress(`metrics fill: rollup in ${Math.round(fillRollup / 1000)} s`);
  const rollupRows = async () =>
    Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM email_metrics_hourly`))[0]!.n);
  const slotted = await rollupRows();
  // What the hourly maintenance leaves: past hours folded to one row per hour, domain and broadcast.
  const fold = await timed(() => run(() => compactMetricsRollup(deps)));
  for (const table of ['email', 'event', 'email_metrics_hourly']) await sql(`ANALYZE ${table}`);
  const [size] = await sql<{ emails: string; events: string }>(
    `SELECT (SELECT count(*) FROM email) AS emails, (SELECT count(*) FROM event) AS events`,
  );
  results.filled = {
    emails: Number(size!.emails),
    events: Number(size!.events),
    rollup_rows_slotted: slotted,
    rollup_rows: await rollupRows(),
    fold_ms: round(fold),
  };
  progress(`filled: ${JSON.stringify(results.filled)}`);

  // ---- Metrics: rollup beside the events, the same query.
  const query = (extra: Partial<EmailMetricsQuery>): EmailMetricsQuery => ({
    startDate: first.toISOString(),
    endDate: new Date(today.getTime() + 86_400_000).toISOString(),
    timezone: 'America/New_York',
    granularity: 'daily',
    metrics: [],
    dimensions: ['period'],
    domainIds: [],
    emailIds: [],
    broadcastIds: [],
    ...extra,
  });
  const measure = async (q: EmailMetricsQuery, reads: number) => {
    const times: number[] = [];
    let answer: Awaited<ReturnType<typeof getEmailMetrics>> | undefined;
    for (let i = 0; i < reads; i += 1)
      times.push(await timed(async () => (answer = await run(() => getEmailMetrics(orm.em, team.id, q, now)))));
    return { times, answer: answer! };
  };
  const metrics: Record<string, unknown> = {};
  const variants: [string, Partial<EmailMetricsQuery>][] = [
    ['30 days daily, by period', { dimensions: ['period'] }],
    ['30 days, by domain', { dimensions: ['domain'] }],
    ['30 days, totals', { dimensions: [] }],
  ];
  for (const [label, extra] of variants) {
    const rollup = await measure(query(extra), READS);
    const events = await measure(query({ ...extra, fromEvents: true }), 1);
    const same = JSON.stringify(rollup.answer.totals) === JSON.stringify(events.answer.totals);
    metrics[label] = {
      rollup_median_ms: round(median(rollup.times)),
      rollup_p95_ms: round(p95(rollup.times)),
      events_ms: round(events.times[0]!),
      ratio: round(median(rollup.times) / events.times[0]!),
      same_totals: same,
      ...(same
        ? {}
        : {
            differs: Object.fromEntries(
              Object.entries(rollup.answer.totals)
                .filter(([m, n]) => events.answer.totals[m as keyof typeof events.answer.totals] !== n)
                .map(([m, n]) => [m, [n, events.answer.totals[m as keyof typeof events.answer.totals]]]),
            ),
          }),
      target_met: p95(rollup.times) < TARGETS.metricsMs,
    };
    progress(`metrics ${label}: ${JSON.stringify(metrics[label])}`);
  }
  results.metrics = metrics;

  // ---- The trigger's cost on the write path.
  const [sample] = await sql<{ id: string }>(`SELECT id FROM email WHERE team_id = ? LIMIT 1`, [team.id]);
  const insertEvents = () =>
    sql(
      `INSERT INTO event (id, created_at, team_id, email_id, type, payload)
       SELECT gen_random_uuid(), now(), ?, ?, 'email.delivered', '{"from": "a@acme.test"}' FROM generate_series(1, 500)`,
      [team.id, sample!.id],
    );
  const writeTimes = async () => {
    const times: number[] = [];
    for (let i = 0; i < 200; i += 1) times.push(await timed(insertEvents));
    return median(times);
  };
  await sql(`ALTER TABLE event DISABLE TRIGGER event_metrics_trigger`);
  const without = await writeTimes();
  await sql(`ALTER TABLE event ENABLE TRIGGER event_metrics_trigger`);
  const withTrigger = await writeTimes();
  results.write_path = {
    insert_500_events_without_trigger_ms: round(without),
    with_trigger_ms: round(withTrigger),
    ratio: round(withTrigger / without),
  };
  progress(`write path: ${JSON.stringify(results.write_path)}`);

  // ---- Broadcast pages.
  const broadcastId = '00000000-0000-4000-9000-000000000001';
  await sql(
    `INSERT INTO segment (id, created_at, team_id, name) VALUES ('00000000-0000-4000-9000-000000000002', now(), ?, 'all')`,
    [team.id],
  );
  await sql(
    `INSERT INTO broadcast (id, created_at, updated_at, team_id, name, segment_id, "from", subject, reply_to, status, region, expanded, expanded_count)
     VALUES (?, now(), now(), ?, 'Bench', '00000000-0000-4000-9000-000000000002', 'a@acme.test', 'Hi', '{}', 'sent', 'us-east-1', true, ?)`,
    [broadcastId, team.id, RECIPIENTS],
  );
  const recipientsFill = await timed(async () => {
    await sql(
      `INSERT INTO contact (id, created_at, updated_at, team_id, email, unsubscribed)
       SELECT gen_random_uuid(), now(), now(), ?, 'p' || i || '@example.com', i % 100 = 3 FROM generate_series(0, ? - 1) AS i`,
      [team.id, RECIPIENTS],
    );
    await sql(
      `INSERT INTO broadcast_recipient (broadcast_id, email_id, team_id, address, sent, delivered, complained, bounce_type, opens, clicks)
       SELECT ?, gen_random_uuid(), ?, 'p' || i || '@example.com', true, i % 100 < 97, i % 1000 = 7,
              CASE WHEN i % 100 >= 98 THEN (ARRAY['permanent', 'transient', 'undetermined'])[1 + i % 3] END,
              CASE WHEN i % 10 < 3 THEN 1 + (i % 10 = 0)::int ELSE 0 END, CASE WHEN i % 20 = 1 THEN 1 ELSE 0 END
         FROM generate_series(0, ? - 1) AS i`,
      [broadcastId, team.id, RECIPIENTS],
    );
    await sql(
      `INSERT INTO broadcast_recipient_link (broadcast_id, email_id, team_id, url, clicks)
       SELECT broadcast_id, email_id, team_id, 'https://acme.test/l' || abs(hashtext(email_id::text)) % 20, 1
         FROM broadcast_recipient WHERE broadcast_id = ? AND clicks > 0`,
      [broadcastId],
    );
    await sql(
      `INSERT INTO broadcast_link (broadcast_id, team_id, url, slot, clicks, unique_clicks)
       SELECT broadcast_id, team_id, url, 0, sum(clicks), count(*) FROM broadcast_recipient_link WHERE broadcast_id = ? GROUP BY 1, 2, 3`,
      [broadcastId],
    );
    // As autovacuum leaves tables at rest: statistics, and the visibility map that lets index-only scans skip the heap.
    for (const table of ['contact', 'broadcast_recipient', 'broadcast_recipient_link', 'broadcast_link'])
      await sql(`VACUUM ANALYZE ${table}`);
  });
  progress(`broadcast fill: ${RECIPIENTS} recipients in ${Math.round(recipientsFill / 1000)} s`);
  const pages: Record<string, unknown> = {};
  const page = async (label: string, fn: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < READS; i += 1) times.push(await timed(() => run(fn)));
    pages[label] = {
      median_ms: round(median(times)),
      p95_ms: round(p95(times)),
      target_met: p95(times) < TARGETS.pageMs,
    };
    progress(`page ${label}: ${JSON.stringify(pages[label])}`);
  };
  const list = (type: RecipientType, extra: { after?: string; email?: string; bounceType?: 'permanent' } = {}) =>
    listBroadcastRecipients(deps, team.id, broadcastId, {
      type,
      email: extra.email,
      bounceType: extra.bounceType,
      page: { limit: 100, after: extra.after },
    });
  const [middle] = await sql<{ email_id: string }>(
    `SELECT email_id FROM broadcast_recipient WHERE broadcast_id = ? ORDER BY email_id OFFSET ? LIMIT 1`,
    [broadcastId, Math.floor(RECIPIENTS / 2)],
  );
  const middleCursor = Buffer.from(`r:${middle!.email_id}`).toString('base64url');
  for (const type of ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed'] as const) {
    await page(`${type}, first page`, () => list(type));
    await page(`${type}, middle page`, () => list(type, { after: middleCursor }));
  }
  await page('bounced, permanent only', () => list('bounced', { bounceType: 'permanent' }));
  await page('sent, by address', () => list('sent', { email: `p${Math.floor(RECIPIENTS / 3)}@example.com` }));
  await page('clicked links', () => listBroadcastClickedLinks(deps, team.id, broadcastId, { limit: 100 }));
  results.broadcast_pages = pages;
  await orm.close();
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

{
  const daily = (results.metrics as Record<string, Record<string, number | boolean>>)['30 days daily, by period']!;
  const pages = Object.values(results.broadcast_pages as Record<string, { median_ms: number; target_met: boolean }>);
  const fastest = Math.min(...pages.map((p) => p.median_ms));
  const slowest = Math.max(...pages.map((p) => p.median_ms));
  reportHeadlines(
    {
      what: `\`GET /emails/metrics\`, 30 days daily, ${EMAILS.toLocaleString('en-US')} emails`,
      figure: `${daily.rollup_median_ms} ms median`,
      baseline: `the same aggregate from the events: ${daily.events_ms} ms`,
      ratio: daily.ratio as number,
      target: targetMet(`< ${TARGETS.metricsMs} ms`, daily.target_met as boolean),
    },
    {
      what: `Broadcast recipients and clicked links, a page of 100, ${RECIPIENTS.toLocaleString('en-US')} recipients`,
      figure: `${fastest} – ${slowest} ms median`,
      target: targetMet(
        `< ${TARGETS.pageMs} ms`,
        pages.every((p) => p.target_met),
      ),
    },
  );
}
if (args.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else {
  const lines = [`emails ${EMAILS}, recipients ${RECIPIENTS}`];
  for (const [label, m] of Object.entries(results.metrics as Record<string, Record<string, unknown>>))
    lines.push(
      `GET /emails/metrics ${label}: rollup ${m.rollup_median_ms} ms (p95 ${m.rollup_p95_ms}) beside events ${m.events_ms} ms: ratio ${m.ratio}, same totals ${m.same_totals}, target < ${TARGETS.metricsMs} ms ${m.target_met ? 'met' : 'MISSED'}`,
    );
  const w = results.write_path as Record<string, number>;
  lines.push(
    `500 events inserted: ${w.with_trigger_ms} ms with the metrics trigger beside ${w.insert_500_events_without_trigger_ms} ms without: ratio ${w.ratio}`,
  );
  for (const [label, p] of Object.entries(results.broadcast_pages as Record<string, Record<string, unknown>>))
    lines.push(
      `broadcast page ${label}: ${p.median_ms} ms (p95 ${p.p95_ms}), target < ${TARGETS.pageMs} ms ${p.target_met ? 'met' : 'MISSED'}`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
}
