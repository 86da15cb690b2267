/**
 * `npm run bench -- --only automations`: two figures of the automation engine.
 *
 * 1. Events accepted per second by POST /events/send (by address, each a new contact, each
 *    starting a run of an enabled automation), beside POST /emails measured in the same run on
 *    the same app and database (target ratio ≥ 0.5); then events naming one known contact, which
 *    create no contact, to tell the contact's cost from the event's.
 * 2. Steps executed per second with `--runs` (100,000) runs due at once, drained by two loops
 *    as a worker's `automation.steps` job does (concurrency 2), on an injected clock: each run is
 *    trigger → condition on a contact property → delay 1 day (→ its end after the clock moves).
 *    Beside it, the claim statement's time with every run due (target < 50 ms) and the worker's
 *    heap and RSS while it drains (bounded: they must not grow with the runs).
 *
 *   node --import tsx test/bench/automations.bench.ts [--json] [--runs 100000] [--duration 10] [--warmup 3] [--connections 50]
 */
import { loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
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
import { claimStepsStatement, runDueSteps } from '../../server/services/automations/run-due-steps.js';
import { createAutomation } from '../../server/services/automations/create-automation.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';
import { type LoadSettings, load } from './load.js';

const TARGET_RATIO = 0.5;
const TARGET_STEPS_PER_SECOND = 1_000;
const TARGET_CLAIM_MS = 50;
/** The job's concurrency per worker (server/jobs/automation-steps.job.ts). */
const LOOPS = 2;

// As deployed: responses are not checked against their schemas in production.
process.env.NODE_ENV = 'production';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    runs: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
  },
});
const runs = Number(args.runs);
const settings: LoadSettings = {
  connections: Number(args.connections),
  warmupSeconds: Number(args.warmup),
  durationSeconds: Number(args.duration),
};
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
// What the drain retains, not the garbage it has not collected yet: heap after a full collection.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const retainedHeap = () => {
  collect();
  return process.memoryUsage().heapUsed;
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
  const logger = createLogger(config.POSTLANE_LOG_LEVEL);
  const orm = await initOrm(config, { pool: serverPool(config) });
  await migrate(config);
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  // Enqueue only, as an API process does; the steps are drained by this process's own loops below.
  const jobs = new AgendaJobs(config, logger, 'api');
  await jobs.ready();
  let now = new Date();
  const deps = createDeps({ config, orm, jobs, logger });
  deps.clock = () => new Date(now);
  const count = (sql: string) => async () => Number((await pool.query(sql)).rows[0].n);
  try {
    const { token, teamId } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      return { ...(await createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' })), teamId: team.id };
    });
    const automation = await RequestContext.create(orm.em, () =>
      createAutomation(deps, teamId, {
        name: 'Bench flow',
        status: 'enabled',
        steps: [
          { key: 'start', type: 'trigger', config: { event_name: 'bench.signed_up' } },
          {
            key: 'is_pro',
            type: 'condition',
            config: { type: 'rule', field: 'contact.properties.plan', operator: 'eq', value: 'pro' },
          },
          { key: 'wait', type: 'delay', config: { duration: '1 day' } },
        ],
        connections: [
          { from: 'start', to: 'is_pro', type: 'default' },
          { from: 'is_pro', to: 'wait', type: 'condition_met' },
          { from: 'is_pro', to: 'wait', type: 'condition_not_met' },
        ],
      }),
    );

    // 1. Events beside emails, the same app, settings and database.
    const app = createApp(deps).callback();
    const auth = { authorization: `Bearer ${token}` };
    progress(
      `POST /emails: ${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s at ${settings.connections} connections…`,
    );
    const emails = await load(
      app,
      {
        path: '/emails',
        headers: auth,
        body: JSON.stringify({
          from: 'Bench <bench@example.com>',
          to: ['user@example.com'],
          subject: 'Hi',
          html: '<p>Hi</p>',
        }),
      },
      settings,
      count('SELECT count(*) AS n FROM email'),
    );
    progress('POST /events/send (a new address each, each starting a run): same settings…');
    const events = await load(
      app,
      {
        path: '/events/send',
        headers: auth,
        body: '{}',
        setupRequest: fileURLToPath(new URL('new-address-request.cjs', import.meta.url)),
      },
      settings,
      count('SELECT count(*) AS n FROM custom_event_record'),
    );
    progress('POST /events/send for one known contact (no contact created): same settings…');
    const known = await load(
      app,
      {
        path: '/events/send',
        headers: auth,
        body: JSON.stringify({ event: 'bench.signed_up', email: 'known@example.com', payload: { plan: 'pro' } }),
      },
      settings,
      count('SELECT count(*) AS n FROM custom_event_record'),
    );
    const eventRatio = events.rps / emails.rps;

    // 2. `runs` runs due at once: contacts and runs written directly (the API's rate is figure 1).
    await pool.query('DELETE FROM automation_run');
    progress(`steps: ${runs} runs due at once…`);
    await pool.query(
      `INSERT INTO contact (id, team_id, email, first_name, last_name, unsubscribed, properties, created_at, updated_at)
       SELECT postlane_uuid_v7(), $1, 'run' || i || '@example.com', null, null, false,
              jsonb_build_object('plan', CASE WHEN i % 2 = 0 THEN 'pro' ELSE 'free' END), now(), now()
         FROM generate_series(1, $2) i`,
      [teamId, runs],
    );
    await pool.query(
      `WITH runs AS (
         INSERT INTO automation_run (id, created_at, updated_at, team_id, automation_id, version, contact_id, status, event)
         SELECT postlane_uuid_v7(), $3, $3, $1, $2, 1, c.id, 'running', '{"name":"bench.signed_up","payload":{}}'::jsonb
           FROM contact c WHERE c.team_id = $1 AND c.email LIKE 'run%'
         RETURNING id, contact_id)
       INSERT INTO automation_run_step (id, created_at, run_id, key, type, status, due_at, contact_id)
       SELECT postlane_uuid_v7(), $3, id, 'start', 'trigger', 'pending', $3, contact_id FROM runs`,
      [teamId, automation.id, now],
    );
    await pool.query('ANALYZE automation_run; ANALYZE automation_run_step; ANALYZE contact');

    // The claim with every run due, in a transaction rolled back (it locks what it takes).
    const claimMs: number[] = [];
    const client = await pool.connect();
    try {
      const { sql, bindings } = claimStepsStatement(now, config.POSTLANE_AUTOMATION_BATCH_SIZE);
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      for (let i = 0; i < 12; i += 1) {
        await client.query('BEGIN');
        const started = process.hrtime.bigint();
        await client.query(text, bindings);
        if (i >= 2) claimMs.push(Number(process.hrtime.bigint() - started) / 1e6);
        await client.query('ROLLBACK');
      }
    } finally {
      client.release();
    }

    const memory = {
      retainedBefore: retainedHeap(),
      retainedAfterFirst: 0,
      retainedAfter: 0,
      heapBefore: process.memoryUsage().heapUsed,
      heapPeak: 0,
      rssBefore: process.memoryUsage().rss,
      rssPeak: 0,
    };
    const sample = setInterval(() => {
      const usage = process.memoryUsage();
      memory.heapPeak = Math.max(memory.heapPeak, usage.heapUsed);
      memory.rssPeak = Math.max(memory.rssPeak, usage.rss);
    }, 100);
    /** Both loops until nothing is due by the clock: what `automation.steps` does on a worker. */
    const drain = async () => {
      let steps = 0;
      const started = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: LOOPS }, async () => {
          for (;;) {
            const taken = await RequestContext.create(orm.em, () => runDueSteps(deps));
            if (taken === 0) return;
            steps += taken;
          }
        }),
      );
      return { steps, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
    };
    const first = await drain();
    memory.retainedAfterFirst = retainedHeap();
    progress(`  ${first.steps} steps in ${first.seconds.toFixed(1)} s; the clock moves a day…`);
    now = new Date(now.getTime() + 86_400_000 + 1000);
    const second = await drain();
    clearInterval(sample);
    memory.retainedAfter = retainedHeap();
    const steps = first.steps + second.steps;
    const seconds = first.seconds + second.seconds;
    const stepsPerSecond = steps / seconds;
    const completed = await count(`SELECT count(*) AS n FROM automation_run WHERE status = 'completed'`)();
    const stepRows = await count(`SELECT count(*) AS n FROM automation_run_step WHERE status = 'completed'`)();

    const figures = {
      loadAverageBefore: loadBefore,
      loadAverageAfter: Number(loadavg()[0]!.toFixed(2)),
      events: {
        eventsPerSecond: Math.round(events.rps),
        p99: events.p99,
        emailsPerSecond: Math.round(emails.rps),
        emailsP99: emails.p99,
        ratio: Number(eventRatio.toFixed(2)),
        knownContactEventsPerSecond: Math.round(known.rps),
        knownContactP99: known.p99,
        knownContactRatio: Number((known.rps / emails.rps).toFixed(2)),
      },
      steps: {
        runs,
        steps,
        seconds: Number(seconds.toFixed(1)),
        stepsPerSecond: Math.round(stepsPerSecond),
        claimMedianMs: Number(median(claimMs).toFixed(1)),
        claimMaxMs: Number(Math.max(...claimMs).toFixed(1)),
        heapBeforeMb: mb(memory.heapBefore),
        heapPeakMb: mb(memory.heapPeak),
        rssBeforeMb: mb(memory.rssBefore),
        rssPeakMb: mb(memory.rssPeak),
        retainedHeapMb: [mb(memory.retainedBefore), mb(memory.retainedAfterFirst), mb(memory.retainedAfter)],
      },
      targets: {
        ratio: { target: TARGET_RATIO, met: eventRatio >= TARGET_RATIO },
        stepsPerSecond: { target: TARGET_STEPS_PER_SECOND, met: stepsPerSecond >= TARGET_STEPS_PER_SECOND },
        claimMs: { target: TARGET_CLAIM_MS, met: median(claimMs) < TARGET_CLAIM_MS },
      },
      sanity: {
        eventsStored: events.rows,
        eventsServed: events.served,
        runsCompleted: completed,
        completedStepRows: stepRows,
        // Each run: trigger, condition, delay (set, then ended): 4 executions, 3 completed rows.
        ok:
          events.rows === events.served &&
          known.rows === known.served &&
          completed === runs &&
          stepRows === runs * 3 &&
          steps === runs * 4,
      },
    };
    // Figures that do not add up mean the measurement is broken, not that a target was missed.
    if (!figures.sanity.ok) process.exitCode = 1;
    reportHeadlines(
      {
        what: '`POST /events/send`, a new contact each, each starting a run',
        figure: `${perSecond(figures.events.eventsPerSecond, 'events')} (p99 ${events.p99} ms)`,
        baseline: `\`POST /emails\`: ${perSecond(figures.events.emailsPerSecond, 'emails')}`,
        ratio: figures.events.ratio,
        target: targetMet(`≥ ${TARGET_RATIO}`, figures.targets.ratio.met),
      },
      {
        what: '`POST /events/send`, one known contact, each starting a run',
        figure: `${perSecond(figures.events.knownContactEventsPerSecond, 'events')} (p99 ${known.p99} ms)`,
        baseline: `\`POST /emails\`: ${perSecond(figures.events.emailsPerSecond, 'emails')}`,
        ratio: figures.events.knownContactRatio,
        target: targetMet(`≥ ${TARGET_RATIO}`, figures.events.knownContactRatio >= TARGET_RATIO),
      },
      {
        what: `Automation steps, ${runs.toLocaleString('en-US')} runs due at once`,
        figure: `${perSecond(figures.steps.stepsPerSecond, 'steps')}; claim ${figures.steps.claimMedianMs} ms`,
        target: `${targetMet(`≥ ${TARGET_STEPS_PER_SECOND}/s`, figures.targets.stepsPerSecond.met)}; ${targetMet(`claim < ${TARGET_CLAIM_MS} ms`, figures.targets.claimMs.met)}`,
      },
    );
    if (args.json) console.log(JSON.stringify(figures, null, 2));
    else {
      const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
      console.log(`\n(load average before: ${loadBefore}, after: ${figures.loadAverageAfter})`);
      console.log(
        `POST /emails          ${String(figures.events.emailsPerSecond).padStart(6)} emails/s (p99 ${emails.p99} ms)`,
      );
      console.log(
        `POST /events/send     ${String(figures.events.eventsPerSecond).padStart(6)} events/s (p99 ${events.p99} ms)   ratio ${figures.events.ratio}`,
      );
      console.log(
        `  one known contact   ${String(figures.events.knownContactEventsPerSecond).padStart(6)} events/s (p99 ${known.p99} ms)   ratio ${figures.events.knownContactRatio}`,
      );
      console.log(
        `steps, ${runs} runs     ${String(figures.steps.stepsPerSecond).padStart(6)} steps/s (${steps} steps in ${figures.steps.seconds} s, ${LOOPS} loops, batches of ${config.POSTLANE_AUTOMATION_BATCH_SIZE})`,
      );
      console.log(
        `claim, all due        ${figures.steps.claimMedianMs} ms median (max ${figures.steps.claimMaxMs} ms)`,
      );
      console.log(
        `worker memory         heap ${figures.steps.heapBeforeMb} → peak ${figures.steps.heapPeakMb} MB, RSS ${figures.steps.rssBeforeMb} → peak ${figures.steps.rssPeakMb} MB; after a full GC before, between and after the drains: ${figures.steps.retainedHeapMb.join(' → ')} MB`,
      );
      console.log(`\ntarget ratio >= ${TARGET_RATIO}: ${met(figures.targets.ratio.met)}`);
      console.log(`target >= ${TARGET_STEPS_PER_SECOND} steps/s: ${met(figures.targets.stepsPerSecond.met)}`);
      console.log(`target claim < ${TARGET_CLAIM_MS} ms: ${met(figures.targets.claimMs.met)}`);
      console.log(
        `sanity: ${events.rows} events stored of ${events.served} served, ${completed} of ${runs} runs completed, ${stepRows} completed step rows: ${figures.sanity.ok ? 'ok' : 'MISMATCH'}`,
      );
    }
  } finally {
    await jobs.stop(1_000);
    await orm.close();
    await pool.end();
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}
