/**
 * `npm run bench -- --only growth`: what the everyday operations cost as the database grows. A
 * database of its own is filled in steps (emails cloned in SQL from one real email sent through
 * the API and delivered by a worker, with its recipients and events; contacts shaped like the
 * contacts benchmark's), `VACUUM ANALYZE`d, and measured at each size through a compiled
 * `postlane serve --role api` (run `npm run build` first):
 *
 * - accepted POST /emails per second (autocannon, as the emails benchmark) and WAL bytes per
 *   accepted email: the WAL between `pg_current_wal_lsn()` before and after, read back with
 *   `pg_walinspect` and kept to the records that touch this database and their transactions' commits
 *   (a shared server writes other databases' WAL meanwhile; a temporary replication slot keeps
 *   the segments until they are read, and goes with its connection);
 * - `GET /emails` first page and a page from the middle, `GET /segments/{id}` (a filtered
 *   `contact_count`), `GET /contacts/{email}`;
 * - the outbox claim (the worker's statement, prepared as the worker prepares it) over a backlog
 *   of 100k due emails added after the ANALYZE, so the planner's statistics say nothing is due;
 *   the first claim is reported apart: it is the first to touch the backlog's freshly written
 *   pages (hint bits; full-page images if a checkpoint began since the fill) and, on a new
 *   connection, loads every day partition's catalog entries (about 13 ms, once per connection);
 * - `GET /emails/{id}` of the middle email: by id alone, it probes every day partition's index;
 * - disk bytes per email (`email`, `email_recipient` and `event`, all partitions, indexes and TOAST included);
 * - at the end, a retention run (`dropExpiredEmailPartitions`) that drops every day before today
 *   (a one-day retention run a day later): its time, the partitions and emails it removed, and the
 *   disk before and after.
 *
 * The database is shaped like one partitioned since it was installed: the (empty) legacy
 * partitions go, and day partitions cover the 35 days before today (a 30-day retention and a few
 * days kept for unsent mail) and the days ahead, so every size is measured over ~40 partitions
 * a table, and the fill (spread back in time) lands in its days.
 *
 * Each figure is printed beside the empty database's, measured first in the same run, as a ratio.
 *
 *   node --import tsx test/bench/growth.bench.ts [--json] [--sizes 0,1m,5m] [--large] [--duration 10] [--connections 50] [--reads 20] [--explain]
 *
 * `--sizes` picks the email counts (contacts follow: 10k up to 100k emails, 100k up to 1M, then 1M);
 * `--large` adds 10M; `--explain` prints `EXPLAIN (ANALYZE, BUFFERS)` of the claim, a middle page
 * and the segment count at each size, on stderr.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { sqlQuery } from '../../server/db/query.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { claimStatement } from '../../server/services/outbox/drain-outbox.js';
import { dropExpiredEmailPartitions } from '../../server/services/maintenance/email-partitions.js';
import { DAYS_AHEAD } from '../../server/services/maintenance/task-catalogue.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { type PostlaneProcess, SERVICE_NODE_FLAGS, spawnPostlane } from '../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';

const BACKLOG = 100_000;
const CLAIMS = 10;
const FILL_CHUNK = 250_000;
/** One email every 86 ms back in time: a million a day. */
const EMAIL_SPACING_MS = 86;
/** Days of partitions before today: a 30-day retention's, and a few more. */
const PAST_DAYS = 35;
const PARTITIONED = ['email', 'email_recipient', 'email_attachment', 'event'];
const TARGETS = { postRatio: 0.8, walRatio: 1.5, claimMs: 50, pageMs: 20, countMs: 100 };

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    sizes: { type: 'string', default: '0,1m,5m' },
    large: { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    reads: { type: 'string', default: '20' },
    explain: { type: 'boolean', default: false },
  },
});
const parseSize = (text: string) => {
  const match = /^(\d+)([km]?)$/i.exec(text.trim());
  if (!match) throw new Error(`--sizes: ${text} is not a count such as 0, 500k or 5m`);
  return Number(match[1]) * ({ k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase()] ?? 1);
};
const sizes = [...new Set([0, ...args.sizes.split(',').map(parseSize), ...(args.large ? [10_000_000] : [])])].sort(
  (a, b) => a - b,
);
const contactsFor = (emails: number) => (emails < 1_000_000 ? 10_000 : emails < 5_000_000 ? 100_000 : 1_000_000);
const reads = Number(args.reads);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

const HTML = `<p>Hello,</p><p>${'Here is what happened this month. '.repeat(20)}</p><p>See you soon.</p>`;
const TEMPLATE = {
  from: 'Bench <news@example.com>',
  to: ['reader@example.com'],
  subject: 'Your November update',
  html: HTML,
  text: 'Hello,\n\nHere is what happened this month.\n',
  tags: [{ name: 'kind', value: 'newsletter' }],
};
const PAYLOAD = JSON.stringify({
  from: 'Bench <bench@example.com>',
  to: ['user@example.com'],
  subject: 'Hello',
  html: '<p>Hi</p>',
});

const timed = async (fn: () => Promise<unknown>) => {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
};
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (n: number) => Number(n.toFixed(1));
  return {
    median: round(sorted[Math.floor(sorted.length / 2)]!),
    mean: round(values.reduce((a, b) => a + b, 0) / values.length),
    max: round(sorted.at(-1)!),
  };
};
type Summary = ReturnType<typeof summary>;

interface Measured {
  emails: number;
  contacts: number;
  fillSeconds: number;
  postPerSecond: number;
  postNon2xx: number;
  walBytesPerEmail: number;
  firstPage: Summary;
  middlePage: Summary;
  segmentCount: Summary;
  contactByEmail: Summary;
  emailById: Summary;
  claim: Summary & { claimed: number; first: number };
  diskBytesPerEmail: number | null;
}

const dbName = uniqueDatabaseName('postlane_bench_growth');
await adminQuery(`CREATE DATABASE "${dbName}"`);
let api: PostlaneProcess | undefined;
try {
  const env = { DATABASE_URL: databaseUrl(dbName) };
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    ...env,
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  });
  const orm = await initOrm(config, { pool: serverPool(config) });
  await migrate(config);
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 });
  // pool.end() resolves before its sockets close, so DROP DATABASE ... WITH (FORCE) can still hit an idle one.
  pool.on('error', () => {});
  const query = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    (await pool.query(sql, params)).rows as T[];
  const one = async <T>(sql: string, params: unknown[] = []) => (await query<T>(sql, params))[0]!;
  const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
  try {
    for (const table of PARTITIONED) {
      await query(`DROP TABLE "${table}_legacy"`);
      await query(
        `SELECT postlane_add_day_partition($1, (now() AT TIME ZONE 'UTC')::date - d) FROM generate_series(-${DAYS_AHEAD}, ${PAST_DAYS}) d`,
        [table],
      );
    }
    const partitions = Number(
      (await one<{ n: string }>(`SELECT count(*) AS n FROM pg_partition_tree('email') WHERE isleaf`)).n,
    );
    /** Bytes of the tables that grow with email: every partition, with indexes and TOAST. */
    const diskBytes = async (tables = ['email', 'email_recipient', 'event']) =>
      Number(
        (
          await one<{ bytes: string }>(
            `SELECT sum(pg_total_relation_size(p.relid)) AS bytes FROM unnest($1::text[]) t, pg_partition_tree(t) p`,
            [tables],
          )
        ).bytes,
      );
    const { teamId, token } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Growth' });
      return {
        teamId: team.id,
        token: (await createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' })).token,
      };
    });
    // A free port, so the API can log as little as a busy installation would (not its start-up line with the address).
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    api = spawnPostlane(
      ['serve', '--role', 'api'],
      { ...env, POSTLANE_PORT: String(port), POSTLANE_LOG_LEVEL: 'warn', POSTLANE_RATE_LIMIT: '0' },
      SERVICE_NODE_FLAGS,
    );
    const url = `http://127.0.0.1:${port}`;
    for (
      let waited = 0;
      !(await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      ));
      waited += 200
    ) {
      if (waited > 60_000 || api.child.exitCode !== null) throw new Error(`the API did not start:\n${api.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: auth,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    };

    // The audience the segment filters: a property, and a segment of the contacts on the pro plan.
    await call('POST', '/contact-properties', { key: 'plan', type: 'string', fallback_value: 'free' });
    const segment = await call('POST', '/segments', {
      name: 'Pro',
      filter: { match: 'all', conditions: [{ field: 'properties.plan', op: 'eq', value: 'pro' }] },
    });

    // The template: a real email, accepted by the API and delivered by a worker (its recipient settled, its events written).
    progress('template: one email through the API and a worker…');
    const template = await call('POST', '/emails', TEMPLATE);
    // Its maintenance leaves the partitions to the benchmark, which drops days itself at the end.
    const worker = spawnPostlane(
      ['serve', '--role', 'worker'],
      {
        ...env,
        POSTLANE_LOG_LEVEL: 'warn',
        POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1',
        POSTLANE_EMAIL_RETENTION_DAYS: '3650',
      },
      SERVICE_NODE_FLAGS,
    );
    try {
      for (
        let waited = 0;
        (await query(`SELECT 1 FROM email WHERE id = $1 AND status = 'sent'`, [template.id])).length === 0;
        waited += 200
      ) {
        if (waited > 60_000 || worker.child.exitCode !== null)
          throw new Error(`the template email was not sent:\n${worker.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // The events written after the send (delivered, from the capture provider) settle within a moment.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    const { created_at: templateAt, region } = await one<{ created_at: Date; region: string }>(
      `SELECT created_at, region FROM email WHERE id = $1`,
      [template.id],
    );
    await query(`DELETE FROM agenda_jobs`);

    const columns = async (table: string) =>
      (
        await query<{ name: string }>(
          `SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
          [table],
        )
      ).map((c) => c.name);
    const cloneOf = async (table: string, overrides: Record<string, string>) => {
      const names = await columns(table);
      return {
        into: names.map((c) => `"${c}"`).join(', '),
        select: names.map((c) => overrides[c] ?? `t."${c}"`).join(', '),
      };
    };
    // The template's id inside its message id and event payloads follows the clone's.
    const sentEmail = {
      id: 's.id',
      created_at: 's.at',
      updated_at: 's.at',
      send_after: 's.at',
      sent_at: 's.at + (t.sent_at - t.created_at)',
      last_event_at: 's.at + (t.last_event_at - t.created_at)',
      message_id: 'replace(t.message_id, t.id::text, s.id::text)',
      provider_message_id: 'replace(t.provider_message_id, t.id::text, s.id::text)',
    };
    const email = await cloneOf('email', sentEmail);
    const recipientCopy = { id: 'gen_random_uuid()', email_id: 'e.id', created_at: 'e.created_at' };
    const recipient = await cloneOf('email_recipient', recipientCopy);
    const event = await cloneOf('event', {
      id: 'gen_random_uuid()',
      email_id: 'e.id',
      created_at: 'e.created_at + (t.created_at - $2::timestamptz)',
      payload: 'replace(t.payload::text, $1::text, e.id::text)::jsonb',
    });
    // The backlog: emails as the API writes them (queued, due, a pending recipient, no events).
    const queuedEmail = await cloneOf('email', {
      ...sentEmail,
      status: `'queued'`,
      last_event: `'queued'`,
      attempts: '0',
      sent_at: 'NULL',
      last_event_at: 'NULL',
      provider_message_id: 'NULL',
    });
    const pendingRecipient = await cloneOf('email_recipient', {
      ...recipientCopy,
      status: `'pending'`,
      response: 'NULL',
    });
    /** Emails number `from` to `to` (exclusive), older the higher the number, each with the template's recipients and events. */
    const fillEmails = (from: number, to: number) =>
      query(
        `WITH s AS (SELECT gen_random_uuid() AS id, $2::timestamptz - g.i * interval '${EMAIL_SPACING_MS} milliseconds' AS at FROM generate_series($3::bigint, $4::bigint - 1) AS g(i)),
         e AS (INSERT INTO email (${email.into}) SELECT ${email.select} FROM s, email t WHERE t.id = $1 RETURNING id, created_at),
         r AS (INSERT INTO email_recipient (${recipient.into}) SELECT ${recipient.select} FROM e, email_recipient t WHERE t.email_id = $1)
         INSERT INTO event (${event.into}) SELECT ${event.select} FROM e, event t WHERE t.email_id = $1`,
        [template.id, templateAt, from, to],
      );
    const fillContacts = (from: number, to: number) =>
      query(
        `INSERT INTO contact (id, created_at, updated_at, team_id, email, first_name, last_name, unsubscribed, properties)
         SELECT gen_random_uuid(), $2::timestamptz - g.i * interval '1 second', $2::timestamptz - g.i * interval '1 second', $1,
                'user' || g.i || '@example' || g.i % 7 || '.com', 'First' || g.i, CASE WHEN g.i % 2 = 1 THEN 'Last' || g.i END, false,
                jsonb_build_object('plan', CASE WHEN g.i % 10 = 0 THEN 'pro' ELSE 'free' END, 'seats', g.i % 50)
           FROM generate_series($3::bigint, $4::bigint - 1) AS g(i)`,
        [teamId, templateAt, from, to],
      );
    const addBacklog = () =>
      query(
        `WITH s AS (SELECT gen_random_uuid() AS id, now() - interval '2 minutes' + g.i * interval '1 millisecond' AS at FROM generate_series(1, ${BACKLOG}) AS g(i)),
         e AS (INSERT INTO email (${queuedEmail.into}) SELECT ${queuedEmail.select} FROM s, email t WHERE t.id = $1 RETURNING id, created_at)
         INSERT INTO email_recipient (${pendingRecipient.into}) SELECT ${pendingRecipient.select} FROM e, email_recipient t WHERE t.email_id = $1`,
        [template.id],
      );

    const explain = async (label: string, sql: string, params: unknown[]) => {
      if (!args.explain) return;
      const plan = await query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
      progress(`\n-- ${label}\n${plan.map((row) => row['QUERY PLAN']).join('\n')}`);
    };

    await query('CREATE EXTENSION pg_walinspect');
    const { oid } = await one<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = current_database()');
    /** Opens a window on the WAL; `written()` closes it and answers the bytes this database wrote in it. */
    const walWindow = async () => {
      const client = new pg.Client({ connectionString: config.DATABASE_URL });
      await client.connect();
      const first = async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows[0] as T;
      await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [
        `postlane_growth_${process.pid}`,
      ]);
      const { from } = await first<{ from: string }>('SELECT pg_current_wal_lsn() AS from');
      return {
        async written() {
          try {
            const { to } = await first<{ to: string }>('SELECT pg_current_wal_lsn() AS to');
            // pg_walinspect reads only flushed WAL; the WAL writer flushes within moments.
            for (
              let tries = 0;
              !(await first<{ flushed: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1 AS flushed', [to])).flushed;
              tries += 1
            ) {
              if (tries > 100) throw new Error(`the WAL was not flushed up to ${to}`);
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            const { bytes } = await first<{ bytes: string }>(
              `WITH r AS (SELECT xid, resource_manager, record_length, block_ref FROM pg_get_wal_records_info($1, $2)),
                    ours AS (SELECT DISTINCT xid FROM r WHERE block_ref LIKE $3)
               SELECT coalesce(sum(record_length), 0) AS bytes FROM r WHERE block_ref LIKE $3 OR (resource_manager = 'Transaction' AND xid IN (SELECT xid FROM ours))`,
              [from, to, `%/${oid}/%`],
            );
            return Number(bytes);
          } finally {
            await client.end();
          }
        },
      };
    };

    let emails = 1;
    let contacts = 0;
    const results: Measured[] = [];
    for (const size of sizes) {
      const fillStart = performance.now();
      for (let at = emails; at < size; at += FILL_CHUNK) {
        progress(`fill: emails ${at.toLocaleString('en')} → ${Math.min(size, at + FILL_CHUNK).toLocaleString('en')}…`);
        await fillEmails(at, Math.min(size, at + FILL_CHUNK));
      }
      emails = Math.max(emails, size);
      const wantContacts = contactsFor(size);
      for (let at = contacts; at < wantContacts; at += FILL_CHUNK)
        await fillContacts(at, Math.min(wantContacts, at + FILL_CHUNK));
      contacts = Math.max(contacts, wantContacts);
      progress(
        `fill: ${emails.toLocaleString('en')} emails, ${contacts.toLocaleString('en')} contacts; VACUUM ANALYZE…`,
      );
      await query('VACUUM ANALYZE');
      const fillSeconds = (performance.now() - fillStart) / 1000;
      const bytes = await diskBytes();

      progress(`measure at ${emails.toLocaleString('en')} emails: reads…`);
      const readTimes = async (path: () => string) => {
        await call('GET', path());
        const times = [];
        for (let i = 0; i < reads; i += 1) times.push(await timed(() => call('GET', path())));
        return summary(times);
      };
      const { id: middle } = await one<{ id: string }>(
        `SELECT id FROM email WHERE team_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [teamId, Math.floor(emails / 2)],
      );
      const firstPage = await readTimes(() => '/emails');
      const middlePage = await readTimes(() => `/emails?after=${middle}`);
      const segmentCount = await readTimes(() => `/segments/${segment.id}`);
      let pick = 0;
      const emailById = await readTimes(() => `/emails/${middle}`);
      const contactByEmail = await readTimes(
        () =>
          `/contacts/${encodeURIComponent(`user${(pick = (pick * 7919 + 104_729) % contacts)}@example${pick % 7}.com`)}`,
      );
      const { created_at: middleAt } = await one<{ created_at: Date }>(`SELECT created_at FROM email WHERE id = $1`, [
        middle,
      ]);
      await explain(
        `GET /emails?after=<middle> at ${emails}`,
        `SELECT id FROM email WHERE team_id = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT 21`,
        [teamId, middleAt, middle],
      );
      await explain(
        `segment count at ${contacts} contacts, as a scan of the team's contacts (before contact_property_term)`,
        `SELECT count(*) FROM contact c WHERE c.team_id = $1 AND (c.id IN (SELECT sm.contact_id FROM segment_member sm WHERE sm.segment_id = $2) OR lower(COALESCE(c.properties ->> 'plan', 'free', '')) = lower('pro'))`,
        [teamId, segment.id],
      );
      await explain(
        `segment count at ${contacts} contacts, from contact_property_term`,
        `SELECT (SELECT count(*) FROM contact_property_term WHERE term = contact_property_term($1, 'plan', 'pro')) + (SELECT count(*) FROM contact c WHERE c.team_id = $1 AND c.id IN (SELECT sm.contact_id FROM segment_member sm WHERE sm.segment_id = $2) AND (lower(COALESCE(c.properties ->> 'plan', 'free', '')) = lower('pro')) IS NOT TRUE)`,
        [teamId, segment.id],
      );

      progress(
        `measure at ${emails.toLocaleString('en')} emails: POST /emails, ${args.warmup} s warm-up and ${args.duration} s at ${args.connections} connections…`,
      );
      const post = (duration: number) =>
        autocannon({
          url: `${url}/emails`,
          method: 'POST',
          headers: auth,
          body: PAYLOAD,
          connections: Number(args.connections),
          duration,
          workers: 1,
        });
      await post(Number(args.warmup));
      const wal = await walWindow();
      const posted = await post(Number(args.duration));
      // Requests autocannon dropped at its stop still commit: wait a moment before reading the WAL position.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const walBytes = await wal.written();

      progress(
        `measure at ${emails.toLocaleString('en')} emails: the claim over ${BACKLOG.toLocaleString('en')} due emails (not analyzed)…`,
      );
      await addBacklog();
      const claim = claimStatement(config, region);
      let claimed = 0;
      const claimOnce = () =>
        timed(
          async () =>
            (claimed += (await sqlQuery(orm.em.fork(), claim.sql, claim.bindings, 'postlane_claim_emails')).length),
        );
      const firstClaim = await claimOnce();
      const claimTimes = [];
      for (let i = 0; i < CLAIMS; i += 1) claimTimes.push(await claimOnce());
      if (args.explain) {
        let n = 0;
        await explain(
          `claim at ${emails} emails`,
          claim.sql.replace(/\?/g, () => `$${(n += 1)}`),
          claim.bindings,
        );
      }
      // Back to the filled shape: the backlog and what the POSTs queued are gone again.
      // One status per statement, so each is served by its partial index.
      await query(`DELETE FROM email WHERE status = 'queued'`);
      await query(`DELETE FROM email WHERE status = 'sending'`);
      await query(`DELETE FROM agenda_jobs`);

      results.push({
        emails,
        contacts,
        fillSeconds: Math.round(fillSeconds),
        postPerSecond: Math.round(posted['2xx'] / posted.duration),
        postNon2xx: posted.non2xx,
        walBytesPerEmail: Math.round(walBytes / Math.max(1, posted['2xx'])),
        firstPage,
        middlePage,
        segmentCount,
        contactByEmail,
        emailById,
        claim: { ...summary(claimTimes), claimed, first: Number(firstClaim.toFixed(1)) },
        diskBytesPerEmail: emails > 1 ? Math.round(bytes / emails) : null,
      });
    }

    progress('retention: dropping every day before today…');
    const count = async () => Number((await one<{ n: string }>('SELECT count(*) AS n FROM email')).n);
    const before = { emails: await count(), bytes: await diskBytes(PARTITIONED) };
    let dropped = 0;
    const retentionMs = await timed(async () => {
      const tomorrow = new Date(Date.now() + 86_400_000);
      dropped = await dropExpiredEmailPartitions({
        ...deps,
        clock: () => tomorrow,
        config: { ...config, POSTLANE_EMAIL_RETENTION_DAYS: 1 },
      });
    });
    const after = { emails: await count(), bytes: await diskBytes(PARTITIONED) };
    report(results, {
      partitionsPerTable: partitions,
      ms: Math.round(retentionMs),
      partitionsDropped: dropped,
      emailsBefore: before.emails,
      emailsAfter: after.emails,
      bytesBefore: before.bytes,
      bytesAfter: after.bytes,
    });
  } finally {
    if (api) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    await deps.providers.close();
    await orm.close();
    await pool.end();
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}

interface Retention {
  partitionsPerTable: number;
  ms: number;
  partitionsDropped: number;
  emailsBefore: number;
  emailsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
}

function report(results: Measured[], retention: Retention) {
  const empty = results[0]!;
  const last = results.at(-1)!;
  const targets = {
    postRatio: {
      target: TARGETS.postRatio,
      value: Number((last.postPerSecond / empty.postPerSecond).toFixed(2)),
      met: last.postPerSecond / empty.postPerSecond >= TARGETS.postRatio,
    },
    walRatio: {
      target: TARGETS.walRatio,
      value: Number((last.walBytesPerEmail / empty.walBytesPerEmail).toFixed(2)),
      met: last.walBytesPerEmail / empty.walBytesPerEmail <= TARGETS.walRatio,
    },
    claimMs: {
      target: TARGETS.claimMs,
      value: last.claim.max,
      met: results.every((r) => r.claim.max < TARGETS.claimMs),
    },
    pageMs: {
      target: TARGETS.pageMs,
      value: Math.max(last.firstPage.median, last.middlePage.median),
      met: results.every((r) => r.firstPage.median < TARGETS.pageMs && r.middlePage.median < TARGETS.pageMs),
    },
    countMs: {
      target: TARGETS.countMs,
      value: last.segmentCount.median,
      met: results.every((r) => r.segmentCount.median < TARGETS.countMs),
    },
  };
  if (args.json) {
    console.log(
      JSON.stringify(
        {
          loadAverageBefore: loadBefore,
          loadAverageAfter: Number(loadavg()[0]!.toFixed(2)),
          backlog: BACKLOG,
          results,
          retention,
          targets,
        },
        null,
        2,
      ),
    );
    return;
  }
  const size = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n));
  const cell = (value: number | null, base: number | null, unit: string) =>
    value === null ? '—' : `${value}${unit}${base && value !== base ? ` (${(value / base).toFixed(2)}×)` : ''}`;
  const rows: [string, (r: Measured) => number | null, (r: Measured) => number | null, string][] = [
    ['POST /emails accepted/s', (r) => r.postPerSecond, () => empty.postPerSecond, ''],
    ['WAL bytes per email', (r) => r.walBytesPerEmail, () => empty.walBytesPerEmail, ' B'],
    ['claim of a batch, mean', (r) => r.claim.mean, () => empty.claim.mean, ' ms'],
    ['claim of a batch, max', (r) => r.claim.max, () => empty.claim.max, ' ms'],
    ['claim, first after backlog', (r) => r.claim.first, () => empty.claim.first, ' ms'],
    ['GET /emails first page', (r) => r.firstPage.median, () => empty.firstPage.median, ' ms'],
    ['GET /emails middle page', (r) => r.middlePage.median, () => empty.middlePage.median, ' ms'],
    ['GET /segments/{id} (count)', (r) => r.segmentCount.median, () => empty.segmentCount.median, ' ms'],
    ['GET /contacts/{email}', (r) => r.contactByEmail.median, () => empty.contactByEmail.median, ' ms'],
    ['GET /emails/{id}', (r) => r.emailById.median, () => empty.emailById.median, ' ms'],
    // The empty database has one email, so its disk per email says nothing: the first filled size is the base.
    [
      'disk bytes per email',
      (r) => r.diskBytesPerEmail,
      () => results.find((r) => r.diskBytesPerEmail !== null)?.diskBytesPerEmail ?? null,
      ' B',
    ],
  ];
  const width = 24;
  console.log(
    `\ngrowth: emails / contacts per column; reads are medians of ${reads}; claim of ${CLAIMS} batches after a first over ${BACKLOG.toLocaleString('en')} due emails (load average ${loadBefore} before, ${loadavg()[0]!.toFixed(2)} after)`,
  );
  console.log(
    ['operation'.padEnd(30), ...results.map((r) => `${size(r.emails)} / ${size(r.contacts)}`.padEnd(width))].join(''),
  );
  for (const [label, value, base, unit] of rows)
    console.log([label.padEnd(30), ...results.map((r) => cell(value(r), base(r), unit).padEnd(width))].join(''));
  console.log(
    `fill seconds: ${results.map((r) => r.fillSeconds).join(', ')}; non-2xx on POST: ${results.map((r) => r.postNon2xx).join(', ')}`,
  );
  const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;
  console.log(
    `retention dropping the days before today (${retention.partitionsPerTable} partitions a table): ${retention.partitionsDropped} partitions dropped in ${retention.ms} ms; ` +
      `emails ${retention.emailsBefore.toLocaleString('en')} → ${retention.emailsAfter.toLocaleString('en')}; disk (emails, recipients, attachments, events) ${gb(retention.bytesBefore)} → ${gb(retention.bytesAfter)}`,
  );
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `targets at ${size(last.emails)}: POST ratio >= ${TARGETS.postRatio} ${met(targets.postRatio.met)} (${targets.postRatio.value}); ` +
      `WAL ratio <= ${TARGETS.walRatio} ${met(targets.walRatio.met)} (${targets.walRatio.value}); claim < ${TARGETS.claimMs} ms ${met(targets.claimMs.met)}; ` +
      `pages < ${TARGETS.pageMs} ms ${met(targets.pageMs.met)}; count < ${TARGETS.countMs} ms ${met(targets.countMs.met)}`,
  );
}
