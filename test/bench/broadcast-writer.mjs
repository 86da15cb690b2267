/**
 * The broadcast writing side alone, for broadcasts.bench.ts: walks one broadcast into the outbox
 * as a worker's `broadcast.send` runs do (compiled code, a process of its own, no `email.send`
 * jobs running here), then prints as JSON its resident memory once set up, its peak (VmHWM) and
 * the write rate. Run after `npm run build`:
 *
 *   DATABASE_URL=… POSTLANE_SECRET_KEY=… node test/bench/broadcast-writer.mjs <broadcast id> <contacts>
 */
import { readFileSync } from 'node:fs';
import { RequestContext } from '@mikro-orm/core';
import { loadConfig } from '../../dist/config/index.js';
import { initOrm } from '../../dist/server/db/orm.js';
import { createDeps } from '../../dist/server/deps.js';
import { AgendaJobs } from '../../dist/server/jobs/index.js';
import { createLogger } from '../../dist/server/logger.js';
import { runBroadcast } from '../../dist/server/services/broadcasts/run-broadcast.js';

const [broadcastId, contacts] = process.argv.slice(2);
const statusMb = (field) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;

const config = loadConfig({
  POSTLANE_CONFIG: '/nonexistent/postlane.json',
  DATABASE_URL: process.env.DATABASE_URL,
  POSTLANE_SECRET_KEY: process.env.POSTLANE_SECRET_KEY,
  POSTLANE_LOG_LEVEL: 'warn',
});
const logger = createLogger(config.POSTLANE_LOG_LEVEL);
const orm = await initOrm(config);
// Enqueues only: this process runs no jobs.
const jobs = new AgendaJobs(config, logger, 'bench-writer');
await jobs.ready();
const deps = createDeps({ config, orm, jobs, logger });
const expanded = async () =>
  (await orm.em.fork().getConnection().execute('SELECT expanded FROM broadcast WHERE id = ?', [broadcastId]))[0]
    .expanded;
await expanded();

const restMb = statusMb('VmRSS');
const start = performance.now();
while (!(await expanded())) await RequestContext.create(orm.em, () => runBroadcast(deps, broadcastId));
const seconds = (performance.now() - start) / 1000;
console.log(
  JSON.stringify({
    restMb: Math.round(restMb),
    peakMb: Math.round(statusMb('VmHWM')),
    writeRate: Math.round(Number(contacts) / seconds),
  }),
);
await jobs.stop(1_000);
await deps.providers.close();
await orm.close();
