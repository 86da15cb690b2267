/**
 * `npm run bench -- --only contacts`: importing 100,000 contacts through POST /contacts/batch
 * (1,000 per call, over HTTP), beside a baseline measured in the same run on the same database:
 * the same rows written with one multi-row INSERT per 1,000 into a bare table. Then the time of a
 * filtered segment's `contact_count` over those contacts (GET /segments/{id}), beside the same
 * count written by hand in SQL.
 *
 *   node --import tsx test/bench/contacts.bench.ts [--json] [--contacts 100000] [--reads 20]
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { createApp } from '../../server/app.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_CONTACTS_PER_SECOND = 10_000;
const TARGET_COUNT_MS = 200;
const BATCH = 1_000;

// As deployed: responses are not checked against their schemas in production.
process.env.NODE_ENV = 'production';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    contacts: { type: 'string', default: '100000' },
    reads: { type: 'string', default: '20' },
  },
});
const total = Number(args.contacts);
const reads = Number(args.reads);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

const contactAt = (i: number) => ({
  email: `user${i}@example${i % 7}.com`,
  first_name: `First${i}`,
  last_name: i % 2 ? `Last${i}` : undefined,
  properties: { plan: i % 10 === 0 ? 'pro' : 'free', seats: i % 50 },
});
const batches = Array.from({ length: Math.ceil(total / BATCH) }, (_, b) =>
  Array.from({ length: Math.min(BATCH, total - b * BATCH) }, (_, i) => contactAt(b * BATCH + i)),
);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const timed = async (fn: () => Promise<unknown>) => {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
};

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
try {
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  });
  const orm = await initOrm(config, { pool: serverPool(config) });
  await migrate(config);
  const deps = createDeps({
    config,
    orm,
    jobs: new RecordingJobQueue(),
    logger: createLogger(config.POSTLANE_LOG_LEVEL),
  });
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  const server = createServer(createApp(deps).callback());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const { token, teamId } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      return { ...(await createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' })), teamId: team.id };
    });
    /** The JSON of a successful call, as the type the caller names. */
    const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json as T;
    };
    await call('POST', '/contact-properties', { key: 'plan', type: 'string', fallback_value: 'free' });
    await call('POST', '/contact-properties', { key: 'seats', type: 'number' });

    // Baseline: the same rows, one multi-row INSERT of 1,000 per statement, on a bare table with the same unique index.
    await pool.query(`CREATE TABLE bench_contact (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), team_id uuid NOT NULL, email text NOT NULL, first_name text, last_name text,
      properties jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (team_id, email))`);
    progress(`baseline: ${total} rows, ${BATCH} per INSERT…`);
    const baselineMs = await timed(async () => {
      for (const rows of batches) {
        const values = rows
          .map((_, i) => `($1, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4}, $${i * 4 + 5})`)
          .join(', ');
        await pool.query(
          `INSERT INTO bench_contact (team_id, email, first_name, last_name, properties) VALUES ${values}`,
          [teamId, ...rows.flatMap((r) => [r.email, r.first_name, r.last_name ?? null, JSON.stringify(r.properties)])],
        );
      }
    });

    progress(`postlane: ${total} contacts through POST /contacts/batch, ${BATCH} per call…`);
    let created = 0;
    const importMs = await timed(async () => {
      for (const rows of batches)
        created += (await call<{ counts: { created: number } }>('POST', '/contacts/batch', rows)).counts.created;
    });
    const [{ n: contactRows }] = (await pool.query('SELECT count(*)::int AS n FROM contact')).rows;
    const [{ n: createdEvents }] = (
      await pool.query(`SELECT count(*)::int AS n FROM event WHERE type = 'contact.created'`)
    ).rows;

    const segment = await call<{ id: string }>('POST', '/segments', {
      name: 'Pro at example3',
      filter: {
        match: 'all',
        conditions: [
          { field: 'properties.plan', op: 'eq', value: 'pro' },
          { field: 'email', op: 'ends_with', value: '@example3.com' },
          { field: 'unsubscribed', op: 'eq', value: false },
        ],
      },
    });
    await pool.query('ANALYZE contact');
    progress(`segment contact_count: ${reads} reads…`);
    let counted = 0;
    for (let i = 0; i < 3; i += 1) await call('GET', `/segments/${segment.id}`);
    const countMs: number[] = [];
    for (let i = 0; i < reads; i += 1)
      countMs.push(
        await timed(
          async () =>
            (counted = (await call<{ contact_count: number }>('GET', `/segments/${segment.id}`)).contact_count),
        ),
      );
    const handSql = `SELECT count(*)::int AS n FROM contact WHERE team_id = $1 AND coalesce(properties->>'plan', 'free') = 'pro' AND email LIKE '%@example3.com' AND NOT unsubscribed`;
    const handMs: number[] = [];
    let expected = 0;
    for (let i = 0; i < reads; i += 1)
      handMs.push(await timed(async () => (expected = (await pool.query(handSql, [teamId])).rows[0].n)));

    const figures = {
      contacts: total,
      loadAverageBefore: loadBefore,
      import: {
        contactsPerSecond: Math.round(total / (importMs / 1000)),
        baselineRowsPerSecond: Math.round(total / (baselineMs / 1000)),
        ratio: Number((baselineMs / importMs).toFixed(2)),
        seconds: Number((importMs / 1000).toFixed(2)),
        baselineSeconds: Number((baselineMs / 1000).toFixed(2)),
      },
      segmentCount: {
        medianMs: Number(median(countMs).toFixed(1)),
        handWrittenSqlMedianMs: Number(median(handMs).toFixed(1)),
        ratio: Number((median(handMs) / median(countMs)).toFixed(2)),
        count: counted,
      },
      targets: {
        contactsPerSecond: {
          target: TARGET_CONTACTS_PER_SECOND,
          met: total / (importMs / 1000) >= TARGET_CONTACTS_PER_SECOND,
        },
        countMs: { target: TARGET_COUNT_MS, met: median(countMs) < TARGET_COUNT_MS },
      },
      sanity: {
        created,
        contactRows,
        createdEvents,
        countMatchesHandWritten: counted === expected,
        ok: created === total && contactRows === total && createdEvents === total && counted === expected,
      },
    };
    // Figures that do not add up mean the measurement is broken, not that a target was missed.
    if (!figures.sanity.ok) process.exitCode = 1;
    reportHeadlines(
      {
        what: 'Contacts, `POST /contacts/batch`',
        figure: perSecond(figures.import.contactsPerSecond, 'contacts'),
        baseline: `multi-row \`INSERT\`: ${perSecond(figures.import.baselineRowsPerSecond, 'rows')}`,
        ratio: figures.import.ratio,
        target: targetMet(`≥ ${TARGET_CONTACTS_PER_SECOND}/s`, figures.targets.contactsPerSecond.met),
      },
      {
        what: `Segment count, ${total.toLocaleString('en-US')} contacts, filtered`,
        figure: `${figures.segmentCount.medianMs} ms median`,
        baseline: `hand-written SQL: ${figures.segmentCount.handWrittenSqlMedianMs} ms`,
        ratio: figures.segmentCount.ratio,
        target: targetMet(`< ${TARGET_COUNT_MS} ms`, figures.targets.countMs.met),
      },
    );
    if (args.json) {
      console.log(JSON.stringify(figures, null, 2));
    } else {
      const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
      console.log(`\n${total} contacts, ${BATCH} per call (load average before: ${loadBefore})`);
      console.log(
        `baseline (multi-row INSERT)   ${figures.import.baselineRowsPerSecond.toString().padStart(7)} rows/s      (${figures.import.baselineSeconds} s)`,
      );
      console.log(
        `postlane POST /contacts/batch ${figures.import.contactsPerSecond.toString().padStart(7)} contacts/s  (${figures.import.seconds} s)   ratio ${figures.import.ratio}`,
      );
      console.log(
        `segment contact_count         ${figures.segmentCount.medianMs.toString().padStart(7)} ms median over ${reads} reads (${counted} contacts); hand-written SQL ${figures.segmentCount.handWrittenSqlMedianMs} ms, ratio ${figures.segmentCount.ratio}`,
      );
      console.log(
        `\ntarget >= ${TARGET_CONTACTS_PER_SECOND} contacts/s: ${met(figures.targets.contactsPerSecond.met)}`,
      );
      console.log(`target contact_count < ${TARGET_COUNT_MS} ms: ${met(figures.targets.countMs.met)}`);
      console.log(
        `sanity: ${contactRows} contact rows, ${createdEvents} contact.created events, count ${figures.sanity.countMatchesHandWritten ? 'matches' : 'DOES NOT match'} hand-written SQL: ${figures.sanity.ok ? 'ok' : 'MISMATCH'}`,
      );
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await orm.close();
    await pool.end();
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}
