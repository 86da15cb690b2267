/**
 * `npm run bench -- --only delivery`: end-to-end emails per second, from POST /emails to
 * acceptance by a real SMTP server, through the whole app as `postlane serve` runs it (an API
 * process and a worker process, compiled, with a pooled `smtp` provider), beside a baseline
 * measured in the same run against the same sink: nodemailer, pooled alike, sending the same
 * messages (same MIME builder, same DKIM key) straight to it. The baseline runs before and after
 * Postlane, and their mean is the figure compared. Every email must arrive exactly once.
 *
 *   node --import tsx test/bench/delivery.bench.ts [--json] [--emails 10000] [--connections 50] [--pool 5] [--timeout 300] [--cpu-prof DIR]
 *
 * `--cpu-prof DIR` writes a V8 CPU profile of each Postlane process into DIR (open it in Chrome's
 * DevTools or speedscope) to see where the time goes. Run `npm run build` first.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { Domain } from '../../server/entities/index.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { SAFE_TRANSPORT_OPTIONS, toNodemailerMessage } from '../../server/mail/mime.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { senderDomainsForEmails } from '../../server/services/domains/dkim-key.js';
import { createDomain } from '../../server/services/domains/create-domain.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { type PostlaneProcess, SERVICE_NODE_FLAGS, spawnPostlane } from '../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { type SinkStats, startSmtpSinkProcess } from '../support/smtp-sink-client.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_EMAILS_PER_SECOND = 800;
const TARGET_RATIO = 0.6;

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    emails: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '50' },
    pool: { type: 'string', default: '5' },
    timeout: { type: 'string', default: '300' },
    'cpu-prof': { type: 'string' },
    // Without Postlane's DKIM signature (a relay that signs itself), on both sides: RSA signing is most of the baseline's own cost.
    unsigned: { type: 'boolean', default: false },
  },
});
const EMAILS = Number(args.emails);
const POOL = Number(args.pool);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

const FROM = 'Bench <news@bench.test>';
const TO = 'reader@example.com';
const SUBJECT = 'Your November update';
const HTML = `<p>Hello,</p><p>${'Here is what happened this month. '.repeat(20)}</p><p>See you soon.</p>`;
const TEXT = 'Hello,\n\nHere is what happened this month.\n';

// --- The sink, in its own process ---------------------------------------------------------------
const sink = await startSmtpSinkProcess();
const sinkPort = sink.port;
/** Waits until `count` messages have arrived (or the timeout), polling the sink. */
async function arrived(count: number, deadline: number): Promise<SinkStats> {
  for (;;) {
    const stats = await sink.stats();
    if (stats.received >= count || Date.now() > deadline) return stats;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
const processes: PostlaneProcess[] = [];
try {
  const providers = JSON.stringify([
    {
      type: 'smtp',
      url: `smtp://127.0.0.1:${sinkPort}`,
      regions: ['us-east-1'],
      max_connections: POOL,
      rate_per_second: 10_000,
    },
  ]);
  const env = { DATABASE_URL: databaseUrl(dbName), POSTLANE_PROVIDERS: providers };
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    ...env,
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  });
  const orm = await initOrm(config, { pool: serverPool(config) });
  await migrate(config);
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 });
  pool.on('error', () => {});
  const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
  try {
    // A team sending from a verified domain that Postlane signs for, as a relay needs.
    const { token, dkim } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      const domain = await createDomain(deps, team.id, { name: 'bench.test' });
      await orm.em.nativeUpdate(
        Domain,
        { id: domain.id },
        { status: 'verified', verifiedAt: new Date(), nextCheckAt: null },
      );
      const { token } = await createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' });
      if (args.unsigned) await orm.em.nativeUpdate(Domain, { id: domain.id }, { dkimPrivateKey: null });
      // One email in, one sender domain out.
      const { dkim } = (await senderDomainsForEmails(deps, [{ team: { id: team.id } as never, from: FROM }]))[0]!;
      return { token, dkim };
    });

    const baseline = async (label: string) => {
      await sink.reset();
      const transport = nodemailer.createTransport({
        pool: true,
        host: '127.0.0.1',
        port: sinkPort,
        secure: false,
        maxConnections: POOL,
        maxMessages: 100,
        rateDelta: 1000,
        rateLimit: 10_000,
        ...SAFE_TRANSPORT_OPTIONS,
      });
      progress(`baseline (${label}): nodemailer, ${POOL} pooled connections, ${EMAILS} messages…`);
      const started = Date.now();
      // The message Postlane would build for the same email, built by the same code.
      await Promise.all(
        Array.from({ length: EMAILS }, (_, i) =>
          transport.sendMail(
            toNodemailerMessage({
              emailId: `baseline-${i}`,
              messageId: `<baseline-${label}-${i}@bench.test>`,
              from: { name: 'Bench', address: 'news@bench.test' },
              to: [{ name: null, address: TO }],
              cc: [],
              bcc: [],
              replyTo: [],
              envelopeTo: [TO],
              subject: SUBJECT,
              html: HTML,
              text: TEXT,
              headers: {},
              attachments: [],
              dkim,
            }),
          ),
        ),
      );
      const stats = await arrived(EMAILS, Date.now() + 10_000);
      transport.close();
      return {
        emailsPerSecond: (stats.received * 1000) / (stats.lastAt - started),
        received: stats.received,
        duplicates: stats.duplicates,
      };
    };

    const before = await baseline('before');

    progress('postlane: starting an API and a worker process…');
    const profile = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : [];
    const api = spawnPostlane(['serve', '--role', 'api'], { ...env, POSTLANE_PORT: '0', POSTLANE_LOG_LEVEL: 'info' }, [
      ...SERVICE_NODE_FLAGS,
      ...profile,
    ]);
    const worker = spawnPostlane(['serve', '--role', 'worker'], { ...env, POSTLANE_LOG_LEVEL: 'info' }, [
      ...SERVICE_NODE_FLAGS,
      ...profile,
    ]);
    processes.push(api, worker);
    await Promise.all([
      api.waitForOutput(/postlane started/, 60_000),
      worker.waitForOutput(/postlane started/, 60_000),
    ]);
    const apiUrl = /"url":"(http:[^"]+)"/.exec(api.output())![1]!;

    await sink.reset();
    progress(`postlane: ${EMAILS} POST /emails at ${args.connections} connections, delivered through the worker…`);
    const started = Date.now();
    const posted = await autocannon({
      url: `${apiUrl}/emails`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ from: FROM, to: [TO], subject: SUBJECT, html: HTML, text: TEXT }),
      connections: Number(args.connections),
      amount: EMAILS,
      // A response slower than autocannon's default 10 s is still an accepted email, not an error.
      timeout: 120,
    });
    const acceptedFor = Date.now() - started;
    const expected = Number((await pool.query(`SELECT count(*) AS n FROM email`)).rows[0].n);
    const delivered = await arrived(expected, Date.now() + Number(args.timeout) * 1000);
    const postlaneRate = (delivered.received * 1000) / (delivered.lastAt - started);

    // Exactly once: every stored email's Message-ID arrived, once, and nothing else did. The last
    // outcomes are written just after the sink accepted their messages: give them a moment.
    const unsettled = async () =>
      Number((await pool.query(`SELECT count(*) AS n FROM email WHERE status <> 'sent'`)).rows[0].n);
    for (const settleBy = Date.now() + 30_000; (await unsettled()) > 0 && Date.now() < settleBy;)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const stored = (await pool.query<{ message_id: string; status: string }>(`SELECT message_id, status FROM email`))
      .rows;
    const arrivedIds = new Set(delivered.ids);
    const missing = stored.filter((row) => !arrivedIds.has(row.message_id)).length;
    const notSent = stored.filter((row) => row.status !== 'sent').length;

    for (const proc of processes.splice(0)) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    const after = await baseline('after');

    const baselineRate = (before.emailsPerSecond + after.emailsPerSecond) / 2;
    const ratio = postlaneRate / baselineRate;
    const result = {
      settings: { emails: EMAILS, connections: Number(args.connections), poolConnections: POOL },
      loadAverageBefore: loadBefore,
      loadAverageAfter: Number(loadavg()[0]!.toFixed(2)),
      baseline: {
        before: Math.round(before.emailsPerSecond),
        after: Math.round(after.emailsPerSecond),
        mean: Math.round(baselineRate),
      },
      postlane: {
        emailsPerSecond: Math.round(postlaneRate),
        acceptedPerSecond: Math.round((posted['2xx'] * 1000) / acceptedFor),
        non2xx: posted.non2xx,
        errors: posted.errors + posted.timeouts,
      },
      ratio: Number(ratio.toFixed(2)),
      targets: {
        emailsPerSecond: {
          target: TARGET_EMAILS_PER_SECOND,
          value: Math.round(postlaneRate),
          met: postlaneRate >= TARGET_EMAILS_PER_SECOND,
        },
        ratio: { target: TARGET_RATIO, value: Number(ratio.toFixed(2)), met: ratio >= TARGET_RATIO },
      },
      sanity: {
        // autocannon's count; `stored` is what the API committed (requests autocannon gave up on included).
        accepted: posted['2xx'],
        stored: expected,
        received: delivered.received,
        duplicates: delivered.duplicates,
        missing,
        notSent,
        exactlyOnce: delivered.received === expected && delivered.duplicates === 0 && missing === 0,
        baselineExactlyOnce:
          before.received === EMAILS && after.received === EMAILS && before.duplicates + after.duplicates === 0,
      },
    };
    // Figures that do not add up mean the measurement is broken, not that a target was missed.
    if (!result.sanity.exactlyOnce || !result.sanity.baselineExactlyOnce || result.sanity.notSent > 0)
      process.exitCode = 1;
    reportHeadlines({
      what: 'End to end: API → worker → SMTP, DKIM-signed',
      figure: perSecond(postlaneRate, 'emails'),
      baseline: `nodemailer pooled to the same sink: ${perSecond(baselineRate, 'emails')}`,
      ratio: result.ratio,
      target: targetMet(
        `≥ ${TARGET_EMAILS_PER_SECOND}/s, ratio ≥ ${TARGET_RATIO}`,
        result.targets.emailsPerSecond.met && result.targets.ratio.met,
      ),
    });
    if (args.json) console.log(JSON.stringify(result, null, 2));
    else {
      const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
      console.log(
        `\n${EMAILS} emails, ${args.connections} connections, ${POOL} SMTP connections, ${args.unsigned ? 'unsigned' : 'DKIM-signed'} (load average before: ${loadBefore}, after: ${result.loadAverageAfter})`,
      );
      console.log(
        `baseline (nodemailer pooled)   ${result.baseline.mean} emails/s   (before ${result.baseline.before}, after ${result.baseline.after})`,
      );
      console.log(
        `postlane POST /emails → SMTP   ${result.postlane.emailsPerSecond} emails/s   ratio ${result.ratio}   (accepted at ${result.postlane.acceptedPerSecond}/s)`,
      );
      console.log(
        `\ntarget >= ${TARGET_EMAILS_PER_SECOND} emails/s: ${met(result.targets.emailsPerSecond.met)} (${result.targets.emailsPerSecond.value})`,
      );
      console.log(`target ratio >= ${TARGET_RATIO}: ${met(result.targets.ratio.met)} (${result.targets.ratio.value})`);
      console.log(
        `sanity: ${result.sanity.accepted} accepted, ${expected} stored, ${delivered.received} received, ${delivered.duplicates} duplicates, ` +
          `${missing} missing, ${notSent} not marked sent: ${result.sanity.exactlyOnce ? 'exactly once' : 'MISMATCH'}; baseline ${result.sanity.baselineExactlyOnce ? 'ok' : 'MISMATCH'}`,
      );
    }
  } finally {
    await deps.providers.close();
    await deps.apiLogs.flush();
    await orm.close();
    await pool.end();
  }
} finally {
  for (const proc of processes) {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
  sink.close();
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}
