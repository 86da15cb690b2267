// scratch: postlane only, for --cpu-prof and timing
import { RequestContext } from '@mikro-orm/core';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../server/app.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import type { Deps } from '../../server/deps.js';
import { AgendaJobs, RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { createProviders } from '../../server/providers/index.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { load } from './load.js';
import pg from 'pg';

process.env.NODE_ENV = 'production';
const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
const config = loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: databaseUrl(dbName), POSTLANE_LOG_LEVEL: 'silent' });
const logger = createLogger(config.POSTLANE_LOG_LEVEL);
const orm = await initOrm(config);
await migrate(orm);
const agenda = process.env.JOBS === 'recording' ? null : new AgendaJobs(config, logger, 'api');
await agenda?.ready();
const deps: Deps = { config, orm, jobs: agenda ?? new RecordingJobQueue(), providers: createProviders(config, orm), logger, clock: () => new Date() };
const { token } = await RequestContext.create(orm.em, async () => {
  const team = await createTeam(deps, { name: 'Bench' });
  return createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' });
});
// timing hooks
const t: Record<string, number[]> = {};
const rec = (k: string, ms: number) => (t[k] ??= []).push(ms);
if (process.env.TIME) {
  const origQuery = (pg.Client.prototype as any).query;
  (pg.Client.prototype as any).query = function (this: any, ...a: any[]) {
    const text = typeof a[0] === 'string' ? a[0] : a[0]?.text ?? '?';
    const key = text.slice(0, 30).replace(/\s+/g, ' ');
    const s = performance.now();
    const last = a[a.length - 1];
    if (typeof last === 'function') { a[a.length - 1] = (...x: any[]) => { rec('sql ' + key, performance.now() - s); last(...x); }; return origQuery.apply(this, a); }
    const r = origQuery.apply(this, a);
    if (r && typeof r.then === 'function') r.then(() => rec('sql ' + key, performance.now() - s), () => {});
    return r;
  };
  const enq = deps.jobs.enqueue.bind(deps.jobs);
  deps.jobs.enqueue = async (...a: any[]) => { const s = performance.now(); try { return await (enq as any)(...a); } finally { rec('enqueue', performance.now() - s); } };
}
import { monitorEventLoopDelay } from 'node:perf_hooks';
const h = monitorEventLoopDelay({ resolution: 5 }); h.enable();
const app = createApp(deps);
const cb = app.callback();
const handle = async (req: any, res: any) => { const s = performance.now(); await cb(req, res); rec('request', performance.now() - s); };
const r = await load(handle, { path: '/emails', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ from: 'Bench <bench@example.com>', to: ['user@example.com'], subject: 'Hello', html: '<p>Hi</p>' }) },
  { connections: Number(process.env.C ?? 50), warmupSeconds: 2, durationSeconds: Number(process.env.D ?? 8) }, async () => 0);
console.log(JSON.stringify(r));
for (const [k, v] of Object.entries(t)) { v.sort((a, b) => a - b); console.log(k.padEnd(45), 'n', v.length, 'p50', v[v.length >> 1]!.toFixed(2), 'p99', v[Math.floor(v.length * 0.99)]!.toFixed(2), 'mean', (v.reduce((a, b) => a + b, 0) / v.length).toFixed(2)); }
console.log('loop delay p50', h.percentile(50)/1e6, 'p99', h.percentile(99)/1e6, 'mean', h.mean/1e6);
await agenda?.stop(1000); await orm.close();
await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
process.exit(0);
