/**
 * `npm run bench -- --only surface` (this file: `--only surface-imports`): a CSV of 1,000,000
 * contacts uploaded through POST /contacts/imports (multipart, over HTTP) and imported by a real
 * worker process (`postlane serve --role worker`, with the service's Node flags), beside a baseline
 * measured in the same run on the same database: `\copy` of the same file into a plain table by
 * psql. Reports the time from the first byte uploaded to `completed`, and the worker's peak RSS
 * (VmHWM of /proc/<pid>/status).
 *
 *   node --import tsx test/bench/surface-imports.bench.ts [--json] [--rows 1000000]
 */
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
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
import { SERVICE_NODE_FLAGS, spawnPostlane } from '../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_SECONDS = 300;
const TARGET_RSS_MB = 300;

// As deployed: responses are not checked against their schemas in production.
process.env.NODE_ENV = 'production';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    rows: { type: 'string', default: '1000000' },
  },
});
const total = Number(args.rows);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));
const timed = async (fn: () => Promise<unknown>) => {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
};

const file = join(tmpdir(), `postlane-bench-import-${process.pid}.csv`);
{
  const out = createWriteStream(file);
  out.write('Email,First Name,Last Name,Plan\n');
  for (let i = 0; i < total; i++) {
    const line = `user${i}@example${i % 7}.com,First${i},"Last, ${i}",${i % 10 === 0 ? 'pro' : 'free'}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}
const fileBytes = statSync(file).size;

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
try {
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
    POSTLANE_IMPORT_MAX_MB: '200',
    POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS: '600',
  });
  await migrate(config);
  const orm = await initOrm(config, { pool: serverPool(config) });
  const logger = createLogger(config.POSTLANE_LOG_LEVEL);
  // Enqueues for real; only the worker process runs jobs.
  const jobs = new AgendaJobs(config, logger, 'bench-api');
  await jobs.ready();
  const deps = createDeps({ config, orm, jobs, logger });
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 });
  pool.on('error', () => {});
  const server = createServer(createApp(deps).callback());
  server.requestTimeout = 600_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const worker = spawnPostlane(
    ['serve', '--role', 'worker'],
    { DATABASE_URL: config.DATABASE_URL, POSTLANE_LOG_LEVEL: 'warn', POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1' },
    SERVICE_NODE_FLAGS,
  );
  try {
    const { token } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      return createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' });
    });
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

    // Baseline: the same file into a plain table with the same unique index, by psql's \copy.
    await pool.query(
      'CREATE TABLE bench_copy (email text NOT NULL UNIQUE, first_name text, last_name text, plan text)',
    );
    progress(`baseline: \\copy of ${total} rows (${(fileBytes / 1e6).toFixed(1)} MB)…`);
    const copyMs = await timed(async () => {
      const result = spawnSync(
        'psql',
        [
          config.DATABASE_URL,
          '-v',
          'ON_ERROR_STOP=1',
          '-qc',
          `\\copy bench_copy FROM '${file}' WITH (FORMAT csv, HEADER)`,
        ],
        { encoding: 'utf8' },
      );
      if (result.status !== 0) throw new Error(`psql: ${result.stderr}`);
    });

    progress(`postlane: POST /contacts/imports of the same file, imported by a worker process…`);
    let id = '';
    let uploadMs = 0;
    const started = process.hrtime.bigint();
    const importMs = await timed(async () => {
      uploadMs = await timed(async () => {
        // curl, a client process of its own as a user's would be (the upload streams from disk).
        const columnMap = JSON.stringify({
          email: 'Email',
          first_name: 'First Name',
          last_name: 'Last Name',
          properties: { plan: { column: 'Plan' } },
        });
        // Not spawnSync: this process serves the upload.
        const curl = await promisify(execFile)(
          'curl',
          [
            '-sS',
            '-m',
            '600',
            '-H',
            `authorization: Bearer ${token}`,
            '-F',
            `file=@${file};type=text/csv`,
            '-F',
            `column_map=${columnMap}`,
            '-w',
            '\n%{http_code}',
            `${url}/contacts/imports`,
          ],
          { encoding: 'utf8' },
        );
        const [text, code] = curl.stdout.trim().split('\n');
        if (code !== '201') throw new Error(`POST /contacts/imports: ${code} ${text} ${curl.stderr}`);
        const body = JSON.parse(text!) as { id: string };
        id = body.id;
      });
      for (let last = ''; ;) {
        const got = await call<{ status: string; counts: Record<string, number> }>('GET', `/contacts/imports/${id}`);
        if (got.status === 'completed' || got.status === 'failed') break;
        const line = `${got.status} ${got.counts.total} rows, ${Math.round(Number(process.hrtime.bigint() - started) / 1e9)} s`;
        if (line !== last) progress(line);
        last = line;
        await sleep(2_000);
      }
    });
    const status = readFileSync(`/proc/${worker.child.pid}/status`, 'utf8');
    const rssMb = Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024);
    const result = await call<{ status: string; counts: Record<string, number> }>('GET', `/contacts/imports/${id}`);
    const [{ n: contactRows }] = (await pool.query('SELECT count(*)::int AS n FROM contact')).rows;
    const [{ n: createdEvents }] = (
      await pool.query(`SELECT count(*)::int AS n FROM event WHERE type = 'contact.created'`)
    ).rows;
    const [{ n: copied }] = (await pool.query('SELECT count(*)::int AS n FROM bench_copy')).rows;

    const figures = {
      rows: total,
      fileMegabytes: Number((fileBytes / 1e6).toFixed(1)),
      loadAverageBefore: loadBefore,
      import: {
        seconds: Number((importMs / 1000).toFixed(1)),
        uploadSeconds: Number((uploadMs / 1000).toFixed(1)),
        rowsPerSecond: Math.round(total / (importMs / 1000)),
        baselineCopySeconds: Number((copyMs / 1000).toFixed(1)),
        baselineRowsPerSecond: Math.round(total / (copyMs / 1000)),
        ratio: Number((copyMs / importMs).toFixed(3)),
        workerPeakRssMb: rssMb,
      },
      targets: {
        seconds: { target: TARGET_SECONDS, met: importMs / 1000 < TARGET_SECONDS },
        workerRssMb: { target: TARGET_RSS_MB, met: rssMb < TARGET_RSS_MB },
      },
      sanity: {
        status: result.status,
        counts: result.counts,
        contactRows,
        createdEvents,
        copied,
        ok:
          result.status === 'completed' &&
          result.counts.created === total &&
          contactRows === total &&
          createdEvents === total &&
          copied === total,
      },
    };
    if (!figures.sanity.ok) process.exitCode = 1;
    reportHeadlines({
      what: `Contact import, ${total.toLocaleString('en-US')}-row CSV, \`POST /contacts/imports\``,
      figure: `${perSecond(figures.import.rowsPerSecond, 'rows')} (${figures.import.seconds} s), worker peak ${rssMb} MB`,
      baseline: `psql \`\\copy\` into a plain table: ${perSecond(figures.import.baselineRowsPerSecond, 'rows')}`,
      ratio: figures.import.ratio,
      target: targetMet(
        `< ${TARGET_SECONDS} s, < ${TARGET_RSS_MB} MB`,
        figures.targets.seconds.met && figures.targets.workerRssMb.met,
      ),
    });
    if (args.json) {
      console.log(JSON.stringify(figures, null, 2));
    } else {
      const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
      const f = figures.import;
      console.log(`\n${total} rows, ${figures.fileMegabytes} MB CSV (load average before: ${loadBefore})`);
      console.log(
        `baseline (psql \\copy, plain table)  ${f.baselineRowsPerSecond.toString().padStart(8)} rows/s  (${f.baselineCopySeconds} s)`,
      );
      console.log(
        `postlane POST /contacts/imports      ${f.rowsPerSecond.toString().padStart(8)} rows/s  (${f.seconds} s, upload ${f.uploadSeconds} s)   ratio ${f.ratio}`,
      );
      console.log(`worker peak RSS ${f.workerPeakRssMb} MB`);
      console.log(`\ntarget < ${TARGET_SECONDS} s: ${met(figures.targets.seconds.met)}`);
      console.log(`target worker RSS < ${TARGET_RSS_MB} MB: ${met(figures.targets.workerRssMb.met)}`);
      console.log(
        `sanity: ${result.status}, ${contactRows} contact rows, ${createdEvents} contact.created events, ${copied} copied: ${figures.sanity.ok ? 'ok' : 'MISMATCH'}`,
      );
    }
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await jobs.stop(1_000);
    await orm.close();
    await pool.end();
  }
} finally {
  rmSync(file, { force: true });
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}
