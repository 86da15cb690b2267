/**
 * `npm run bench`: accepted POST /emails per second and latency under concurrent load, beside a
 * baseline measured in the same run on the same database: a bare Koa handler doing one INSERT.
 * Absolute figures depend on the machine; the ratio much less.
 *
 *   node --import tsx test/bench/emails.bench.ts [--json] [--duration 10] [--warmup 3] [--connections 50] [--alternate 0]
 *
 * `--alternate N` then measures plain and keyed sends in turn, N rounds on the same app: on a
 * busy machine the load moves between two runs, so their ratio is read round by round, beside
 * the CPU each accepted email cost the app's thread and the database's backends, which other
 * engineers' load moves much less than a rate.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { createApp } from '../../server/app.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { AgendaJobs } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { type LoadResult, type LoadSettings, load } from './load.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_RPS = 1_500;
const TARGET_RATIO = 0.65;
const BATCH_SIZE = 100;

// As deployed: responses are not checked against their schemas in production.
process.env.NODE_ENV = 'production';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    alternate: { type: 'string', default: '0' },
  },
});
const settings: LoadSettings = {
  connections: Number(args.connections),
  warmupSeconds: Number(args.warmup),
  durationSeconds: Number(args.duration),
};
const progress = (line: string) => process.stderr.write(`${line}\n`);

const payload = JSON.stringify({
  from: 'Bench <bench@example.com>',
  to: ['user@example.com'],
  subject: 'Hello',
  html: '<p>Hi</p>',
});

// Both targets share the machine with whatever else runs; a busy machine skews the ratio too.
const loadBefore = Number(loadavg()[0]!.toFixed(2));

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
try {
  // A nonexistent config path, and nothing from the environment: no machine config leaks in.
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  });
  const logger = createLogger(config.POSTLANE_LOG_LEVEL);
  const orm = await initOrm(config, { pool: serverPool(config) });
  await migrate(config);
  // For the row counts, outside both measured paths.
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE });
  // pool.end() resolves before its sockets close, so DROP DATABASE ... WITH (FORCE) can still hit an idle one.
  pool.on('error', () => {});
  // Enqueue only, never started as a worker: what an API process (`--role api`) does.
  const jobs = new AgendaJobs(config, logger, 'api');
  await jobs.ready();
  const deps = createDeps({ config, orm, jobs, logger });
  try {
    const count = (table: string) => async () =>
      Number((await pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);

    await pool.query(
      'CREATE TABLE bench_baseline (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(), body jsonb NOT NULL)',
    );
    const bare = new Koa();
    bare.use(koaBody());
    // On the same pool as Postlane: the ORM's connection, which every Postlane query goes through.
    const connection = orm.em.getConnection();
    bare.use(async (ctx) => {
      const row = await connection.execute<{ id: string }>(
        'INSERT INTO bench_baseline (body) VALUES (?) RETURNING id',
        [JSON.stringify(ctx.request.body)],
        'get',
      );
      ctx.body = { id: row.id };
    });
    progress(
      `baseline: ${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s at ${settings.connections} connections…`,
    );
    const baseline = await load(
      bare.callback(),
      { path: '/', headers: {}, body: payload },
      settings,
      count('bench_baseline'),
    );

    const { token } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      return createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' });
    });
    progress('postlane: same settings…');
    const postlane = await load(
      createApp(deps).callback(),
      { path: '/emails', headers: { authorization: `Bearer ${token}` }, body: payload },
      settings,
      count('email'),
    );
    // Warm-up included: every accepted email, warm-up or measured, must have a drain run waiting, due no later than it.
    const emailsTotal = await count('email')();
    const jobsEnqueued = Number(
      (
        await pool.query(
          `SELECT count(*) AS n FROM email e WHERE EXISTS (SELECT 1 FROM agenda_jobs j WHERE j.name = 'email.drain' AND j.data->>'region' = e.region AND j.next_run_at <= e.send_after)`,
        )
      ).rows[0].n,
    );

    const app = createApp(deps).callback();
    const auth = { authorization: `Bearer ${token}` };
    const keyedRequest = {
      path: '/emails',
      headers: { ...auth, 'idempotency-key': '[<id>]' },
      body: payload,
      idReplacement: true,
    };
    progress('postlane batch of 100: same settings…');
    const batch = await load(
      app,
      { path: '/emails/batch', headers: auth, body: `[${Array(BATCH_SIZE).fill(payload).join(',')}]` },
      settings,
      count('email'),
    );
    progress('postlane with Idempotency-Key: same settings…');
    const keyed = await load(app, keyedRequest, settings, count('email'));

    /** CPU milliseconds of this process's main thread (the app; the load generator has a thread of its own) and of the database's backends. */
    const cpuMs = async () => {
      // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in ticks of 10 ms (USER_HZ is 100 on Linux).
      const ticks = (stat: string) =>
        stat
          .slice(stat.lastIndexOf(')') + 2)
          .split(' ')
          .slice(11, 13)
          .reduce((sum, n) => sum + Number(n), 0) * 10;
      const pids = (
        await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')
      ).rows.map((r) => r.pid);
      const backends = new Map<number, number>();
      for (const pid of pids) {
        try {
          backends.set(pid, ticks(readFileSync(`/proc/${pid}/stat`, 'utf8')));
        } catch {
          // A backend that ended meanwhile is not counted.
        }
      }
      return { app: ticks(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')), backends };
    };
    /** Warm-up included: CPU per email written over the whole load. */
    const measured = async (request: Parameters<typeof load>[1]) => {
      const [before, rowsBefore] = [await cpuMs(), await count('email')()];
      const result = await load(app, request, settings, count('email'));
      const [after, rows] = [await cpuMs(), (await count('email')()) - rowsBefore];
      if (result.rows !== result.served) process.exitCode = 1;
      const db = [...after.backends].reduce((sum, [pid, ms]) => sum + ms - (before.backends.get(pid) ?? 0), 0);
      return {
        rps: Math.round(result.rps),
        appUs: Math.round(((after.app - before.app) * 1000) / rows),
        dbUs: Math.round((db * 1000) / rows),
        rowsMatchServed: result.rows === result.served,
      };
    };
    const rounds: Round[] = [];
    for (let round = 1; round <= Number(args.alternate); round += 1) {
      progress(`alternating, round ${round}: plain, then with Idempotency-Key…`);
      const loadAverage = Number(loadavg()[0]!.toFixed(2));
      const plain = await measured({ path: '/emails', headers: auth, body: payload });
      const keyed = await measured(keyedRequest);
      rounds.push({ round, loadAverage, plain, keyed, ratio: Number((keyed.rps / plain.rps).toFixed(2)) });
    }
    report(baseline, postlane, { emailsTotal, jobsEnqueued }, { batch, keyed }, rounds);
  } finally {
    await jobs.stop(1_000);
    await deps.providers.close();
    await deps.apiLogs.flush();
    await orm.close();
    await pool.end();
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}

type Measured = LoadResult & { rows: number };
/** Accepted per second, and CPU microseconds per email of the app's thread and of the database. */
interface Side {
  rps: number;
  appUs: number;
  dbUs: number;
  rowsMatchServed: boolean;
}
/** One round of `--alternate`: plain and keyed sends, and the load average as it began. */
interface Round {
  round: number;
  loadAverage: number;
  plain: Side;
  keyed: Side;
  ratio: number;
}

function report(
  baseline: Measured,
  postlane: Measured,
  jobs: { emailsTotal: number; jobsEnqueued: number },
  more: { batch: Measured; keyed: Measured },
  rounds: Round[],
) {
  const ratio = postlane.rps / baseline.rps;
  const batchEmailsPerSecond = more.batch.rps * BATCH_SIZE;
  const others = {
    batchOf100: {
      requestsPerSecond: Math.round(more.batch.rps),
      emailsPerSecond: Math.round(batchEmailsPerSecond),
      ratio: Number((batchEmailsPerSecond / baseline.rps).toFixed(2)),
      p50: more.batch.p50,
      p99: more.batch.p99,
    },
    withIdempotencyKey: {
      requestsPerSecond: Math.round(more.keyed.rps),
      ratio: Number((more.keyed.rps / baseline.rps).toFixed(2)),
      p50: more.keyed.p50,
      p99: more.keyed.p99,
    },
  };
  const targets = {
    rps: { target: TARGET_RPS, value: Math.round(postlane.rps), met: postlane.rps >= TARGET_RPS },
    ratio: { target: TARGET_RATIO, value: Number(ratio.toFixed(2)), met: ratio >= TARGET_RATIO },
  };
  const sanity = {
    emailRows: postlane.rows,
    served2xx: postlane.served,
    autocannon2xx: postlane.accepted,
    rowsMatchServed: postlane.rows === postlane.served,
    // autocannon drops what is in flight when its duration ends; the server still commits it.
    droppedInFlight: postlane.served - postlane.accepted,
    everyEmailEnqueued: jobs.jobsEnqueued === jobs.emailsTotal,
    batchRowsMatchServed: more.batch.rows === more.batch.served * BATCH_SIZE,
    keyedRowsMatchServed: more.keyed.rows === more.keyed.served,
    ...jobs,
  };
  // Figures that do not add up mean the measurement is broken, not that a target was missed.
  if (
    !sanity.rowsMatchServed ||
    !sanity.everyEmailEnqueued ||
    !sanity.batchRowsMatchServed ||
    !sanity.keyedRowsMatchServed
  )
    process.exitCode = 1;
  const bare = `bare Koa + one INSERT: ${perSecond(baseline.rps, 'req')}`;
  reportHeadlines(
    {
      what: '`POST /emails`',
      figure: `${perSecond(postlane.rps, 'emails')} (p99 ${postlane.p99} ms)`,
      baseline: bare,
      ratio: targets.ratio.value,
      target: targetMet(`≥ ${TARGET_RPS}/s, ratio ≥ ${TARGET_RATIO}`, targets.rps.met && targets.ratio.met),
    },
    {
      what: '`POST /emails/batch`, 100 a request',
      figure: perSecond(others.batchOf100.emailsPerSecond, 'emails'),
      baseline: bare,
      ratio: others.batchOf100.ratio,
    },
    {
      what: '`POST /emails` with `Idempotency-Key`',
      figure: perSecond(more.keyed.rps, 'emails'),
      baseline: `plain \`POST /emails\`: ${perSecond(postlane.rps, 'emails')}`,
      ratio: Number((more.keyed.rps / postlane.rps).toFixed(2)),
    },
  );
  if (args.json) {
    const round = ({ rows: _rows, ...r }: Measured) => ({ ...r, rps: Math.round(r.rps) });
    console.log(
      JSON.stringify(
        {
          settings,
          loadAverageBefore: loadBefore,
          baseline: round(baseline),
          postlane: round(postlane),
          ratio: targets.ratio.value,
          targets,
          ...others,
          sanity,
          alternating: rounds,
        },
        null,
        2,
      ),
    );
    return;
  }
  const line = (label: string, r: Measured) =>
    `${label.padEnd(28)}${Math.round(r.rps).toString().padStart(6)} req/s  p50 ${String(r.p50).padStart(3)} ms  p99 ${String(r.p99).padStart(4)} ms` +
    (r.non2xx || r.errors ? `  (${r.non2xx} non-2xx, ${r.errors} errors)` : '');
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `\n${settings.connections} connections, ${settings.durationSeconds} s after ${settings.warmupSeconds} s warm-up (load average before: ${loadBefore})`,
  );
  console.log(line('baseline (koa + 1 INSERT)', baseline));
  console.log(`${line('postlane POST /emails', postlane)}   ratio ${ratio.toFixed(2)}`);
  console.log(
    `${line('postlane batch of 100', more.batch)}   = ${others.batchOf100.emailsPerSecond} emails/s, ratio ${others.batchOf100.ratio}`,
  );
  console.log(`${line('postlane + Idempotency-Key', more.keyed)}   ratio ${others.withIdempotencyKey.ratio}`);
  console.log(`\ntarget >= ${TARGET_RPS} accepted/s: ${met(targets.rps.met)} (${targets.rps.value})`);
  console.log(`target ratio >= ${TARGET_RATIO}: ${met(targets.ratio.met)} (${targets.ratio.value})`);
  console.log(
    `sanity: ${sanity.emailRows} email rows ${sanity.rowsMatchServed ? '=' : '!='} ${sanity.served2xx} 2xx served ` +
      `(autocannon counted ${sanity.autocannon2xx}; ${sanity.droppedInFlight} in flight at its stop); ` +
      `${sanity.jobsEnqueued} of ${sanity.emailsTotal} emails with a drain booked ${sanity.everyEmailEnqueued ? 'ok' : 'MISMATCH'}; ` +
      `batch rows ${sanity.batchRowsMatchServed ? 'ok' : 'MISMATCH'}; keyed rows ${sanity.keyedRowsMatchServed ? 'ok' : 'MISMATCH'}`,
  );
  if (rounds.length === 0) return;
  console.log('\nalternating on the same app and database, keyed beside plain:');
  const side = (s: Side) =>
    `${String(s.rps).padStart(5)} req/s (CPU per email: app ${s.appUs} µs, database ${s.dbUs} µs${s.rowsMatchServed ? '' : ', rows MISMATCH'})`;
  for (const r of rounds)
    console.log(
      `round ${r.round}: plain ${side(r.plain)}, keyed ${side(r.keyed)}, ratio ${r.ratio.toFixed(2)} (load average ${r.loadAverage})`,
    );
  const sum = (pick: (r: Round) => number) => rounds.reduce((total, r) => total + pick(r), 0);
  console.log(
    `keyed/plain CPU per email over all rounds: app ${(sum((r) => r.keyed.appUs) / sum((r) => r.plain.appUs)).toFixed(2)}, database ${(sum((r) => r.keyed.dbUs) / sum((r) => r.plain.dbUs)).toFixed(2)}`,
  );
}
