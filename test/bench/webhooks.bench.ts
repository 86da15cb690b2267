/**
 * `npm run bench -- --only webhooks`: signed webhook deliveries per second through the whole engine
 * (outbox rows, Agenda wake-ups, per-endpoint drain jobs with 8 lanes and the 50/s cap, signing,
 * keep-alive HTTP through the SSRF filter, settle writes) to 400 endpoints on 10 loopback receivers
 * (their caps add up to 20,000/s, far past what the engine does here: the engine is measured, not
 * the cap), beside a
 * baseline measured in the same run: the same number of signed POSTs sent straight from a loop
 * (no database, no caps) over the same kind of agent. Also checks the 50/s and 8-in-flight caps at
 * the receivers. The engine is a real worker process (`postlane serve --role worker`, compiled, so
 * run `npm run build` first), stopped with SIGTERM as a supervisor would: Agenda leaves a timer of
 * half a job's lock lifetime (up to 15 minutes) behind each job run, which kept this process alive
 * long after its report when the worker ran in it.
 *
 *   node --import tsx test/bench/webhooks.bench.ts [--json] [--endpoints-per-receiver 40] [--events 40]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { AgendaJobs } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { emitEvent } from '../../server/services/events/emit-event.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { createWebhook } from '../../server/services/webhooks/create-webhook.js';
import { WEBHOOK_RATE_PER_SECOND } from '../../server/webhooks/delivery-policy.js';
import { postWebhook } from '../../server/webhooks/post-webhook.js';
import { createMessageId, decodeSigningSecret, signatureHeaders } from '../../server/webhooks/signing.js';
import { DeliveryAgents } from '../../server/webhooks/ssrf.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { SERVICE_NODE_FLAGS, spawnPostlane } from '../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { startReceivers } from './webhook-receivers.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_RATIO = 0.6;
const RECEIVERS = 10;
const EVENTS_PER_TRANSACTION = 50;

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    'endpoints-per-receiver': { type: 'string', default: '40' },
    events: { type: 'string', default: '40' },
  },
});
const endpointsPerReceiver = Number(args['endpoints-per-receiver']);
const events = Number(args.events);
const endpointCount = RECEIVERS * endpointsPerReceiver;
const expected = endpointCount * events;
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

/** The most arrivals in any one-second window (times sorted, as they arrived). */
const busiestSecond = (times: number[]) => {
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i += 1) {
    while (times[i]! - times[j]! >= 1000) j += 1;
    best = Math.max(best, i - j + 1);
  }
  return best;
};

// Receivers first: a failure to start them leaves no database behind.
const receivers = await startReceivers(RECEIVERS);
const dbName = uniqueDatabaseName('postlane_bench');
try {
  await adminQuery(`CREATE DATABASE "${dbName}"`);
  // The worker's environment; this process reads the same, for the baseline's agents and the queueing.
  const env = {
    DATABASE_URL: databaseUrl(dbName),
    DATABASE_POOL_SIZE: '30',
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    POSTLANE_WEBHOOK_WORKERS: String(endpointCount),
    POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1',
  };
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    ...env,
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  });
  const logger = createLogger(config.POSTLANE_LOG_LEVEL);
  const orm = await initOrm(config, { pool: serverPool(config) });
  await migrate(config);
  // Enqueue only: the deliveries' drain jobs wait for the worker process.
  const jobs = new AgendaJobs(config, logger, 'api');
  await jobs.ready();
  const deps = createDeps({ config, orm, jobs, logger });
  try {
    const { teamId, endpoints } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      const created = [];
      for (let i = 0; i < endpointCount; i += 1) {
        const { endpoint, signingSecret } = await createWebhook(deps, team.id, {
          url: `${receivers.urls[i % RECEIVERS]}/endpoint-${i}`,
          events: ['*'],
        });
        created.push({ id: endpoint.id, url: endpoint.url, secret: signingSecret });
      }
      return { teamId: team.id, endpoints: created };
    });

    // Baseline: the same signed POSTs from a plain loop, 8 in flight per endpoint, no caps, no database.
    progress(`baseline: ${expected} signed POSTs straight from a loop…`);
    const agents = new DeliveryAgents(config);
    const body = JSON.stringify({
      type: 'contact.created',
      created_at: new Date().toISOString(),
      data: { id: 'bench', email: 'bench@example.com' },
    });
    const baselineStart = performance.now();
    await Promise.all(
      endpoints.flatMap((endpoint) => {
        const key = decodeSigningSecret(endpoint.secret)!;
        const url = new URL(endpoint.url);
        let left = events;
        return Array.from({ length: 8 }, async () => {
          while (left-- > 0) {
            const headers = signatureHeaders([key], createMessageId(), Math.floor(Date.now() / 1000), body);
            const result = await postWebhook(agents.for(url), url, headers, body, 15_000);
            if (result.errorClass) throw new Error(`baseline POST failed: ${result.response}`);
          }
        });
      }),
    );
    const baselineSeconds = (performance.now() - baselineStart) / 1000;
    agents.destroy();
    await receivers.report(true);

    // The engine: fill the outbox through emitEvent (fan-out to every endpoint), then start a worker.
    progress(`postlane: queueing ${events} events × ${endpointCount} endpoints = ${expected} deliveries…`);
    for (let done = 0; done < events; done += EVENTS_PER_TRANSACTION) {
      await RequestContext.create(orm.em, () =>
        orm.em.transactional(async (tx) => {
          for (let i = done; i < Math.min(events, done + EVENTS_PER_TRANSACTION); i += 1) {
            await emitEvent(tx, {
              teamId,
              type: 'contact.created',
              data: { id: `contact-${i}`, email: `c${i}@example.com` },
            });
          }
        }),
      );
    }
    progress('postlane: delivering (worker process)…');
    const engineStart = performance.now();
    const worker = spawnPostlane(
      ['serve', '--role', 'worker'],
      { ...env, POSTLANE_LOG_LEVEL: 'warn' },
      SERVICE_NODE_FLAGS,
    );
    try {
      while ((await receivers.count()) < expected) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (worker.child.exitCode !== null) throw new Error(`the worker exited:\n${worker.output()}`);
        if (performance.now() - engineStart > 300_000)
          throw new Error(`only ${await receivers.count()} of ${expected} delivered after 5 minutes`);
      }
      // Let the last settles commit before counting rows.
      await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    const received = await receivers.report();
    // From the first arrival to the last, on the receivers' clock: the worker's start-up is not delivery.
    const times = Object.values(received.arrivals).flat();
    const engineSeconds = (Math.max(...times) - Math.min(...times)) / 1000;
    const [{ delivered }] = (await orm.em
      .getConnection()
      .execute(`SELECT count(*)::int AS delivered FROM webhook_delivery WHERE status = 'delivered'`)) as [
      { delivered: number },
    ];

    const secrets = new Map(endpoints.map((e) => [new URL(e.url).pathname, e.secret]));
    const verified = received.samples.every((s) => {
      new Webhook(secrets.get(s.path)!).verify(s.body, s.headers);
      return true;
    });
    const arrivals = Object.values(received.arrivals);
    const perEndpointBusiestSecond = Math.max(...arrivals.map(busiestSecond));
    const perEndpointAverage = Math.max(...arrivals.map((t) => (t.length - 1) / ((t.at(-1)! - t[0]!) / 1000)));
    const maxInFlight = Math.max(...Object.values(received.maxOpen));
    report({
      baselinePerSecond: expected / baselineSeconds,
      enginePerSecond: (expected - 1) / engineSeconds,
      ceilingPerSecond: endpointCount * WEBHOOK_RATE_PER_SECOND,
      perEndpointBusiestSecond,
      perEndpointAverage,
      maxInFlight,
      delivered,
      verifiedSamples: verified ? received.samples.length : 0,
    });
  } finally {
    await jobs.stop(1_000);
    deps.webhookAgents.destroy();
    await deps.providers.close();
    await orm.close();
  }
} finally {
  await receivers.close();
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}

function report(r: {
  baselinePerSecond: number;
  enginePerSecond: number;
  ceilingPerSecond: number;
  perEndpointBusiestSecond: number;
  perEndpointAverage: number;
  maxInFlight: number;
  delivered: number;
  verifiedSamples: number;
}) {
  const ratio = r.enginePerSecond / r.baselinePerSecond;
  const targets = {
    ratio: { target: TARGET_RATIO, value: Number(ratio.toFixed(2)), met: ratio >= TARGET_RATIO },
    // Measured at receivers sharing this process: allow a request or two of arrival jitter.
    perEndpointRate: {
      target: WEBHOOK_RATE_PER_SECOND,
      busiestSecond: r.perEndpointBusiestSecond,
      average: Number(r.perEndpointAverage.toFixed(1)),
      met:
        r.perEndpointAverage <= WEBHOOK_RATE_PER_SECOND * 1.02 &&
        r.perEndpointBusiestSecond <= WEBHOOK_RATE_PER_SECOND + 2,
    },
    inFlight: { target: 8, value: r.maxInFlight, met: r.maxInFlight <= 8 },
  };
  const sanity = {
    expected,
    delivered: r.delivered,
    allDelivered: r.delivered === expected,
    verifiedSamples: r.verifiedSamples,
  };
  if (!sanity.allDelivered || r.verifiedSamples === 0) process.exitCode = 1;
  reportHeadlines({
    what: `Webhook deliveries, ${endpointCount} endpoints capped at ${WEBHOOK_RATE_PER_SECOND}/s each`,
    figure: perSecond(r.enginePerSecond, 'deliveries'),
    baseline: `signed POSTs from a loop: ${perSecond(r.baselinePerSecond, 'deliveries')}`,
    ratio: Number(ratio.toFixed(2)),
    target: targetMet(`ratio ≥ ${TARGET_RATIO}`, targets.ratio.met),
  });
  if (args.json) {
    console.log(
      JSON.stringify(
        {
          receivers: RECEIVERS,
          endpoints: endpointCount,
          events,
          loadAverageBefore: loadBefore,
          baselinePerSecond: Math.round(r.baselinePerSecond),
          enginePerSecond: Math.round(r.enginePerSecond),
          ceilingPerSecond: r.ceilingPerSecond,
          ratio: Number(ratio.toFixed(2)),
          targets,
          sanity,
        },
        null,
        2,
      ),
    );
    return;
  }
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `\n${RECEIVERS} receivers, ${endpointCount} endpoints, ${expected} deliveries (load average before: ${loadBefore})`,
  );
  console.log(`baseline (signed POSTs from a loop)  ${Math.round(r.baselinePerSecond).toString().padStart(6)} /s`);
  console.log(
    `postlane engine                      ${Math.round(r.enginePerSecond).toString().padStart(6)} /s   ratio ${ratio.toFixed(2)}; cap ceiling ${r.ceilingPerSecond}/s (${endpointCount} × ${WEBHOOK_RATE_PER_SECOND})`,
  );
  console.log(`\ntarget ratio >= ${TARGET_RATIO}: ${met(targets.ratio.met)} (${targets.ratio.value})`);
  console.log(
    `per-endpoint rate <= ${WEBHOOK_RATE_PER_SECOND}/s: ${met(targets.perEndpointRate.met)} (average ${targets.perEndpointRate.average}/s, busiest second ${r.perEndpointBusiestSecond})`,
  );
  console.log(`in flight per endpoint <= 8: ${met(targets.inFlight.met)} (${r.maxInFlight})`);
  console.log(
    `sanity: ${r.delivered} of ${expected} rows delivered; ${r.verifiedSamples} sampled signatures verified with standardwebhooks`,
  );
}
