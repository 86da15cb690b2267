/**
 * `npm run bench -- --only direct`: direct delivery end to end, from POST /emails to acceptance by
 * the recipients' own MX hosts on port 25, through the whole app as `postlane serve` runs it (an API
 * process and a worker process, compiled, with a `direct` provider). Three recipient domains in
 * three MX groups, each group one sink (test/support/smtp-sink-process.ts) on port 25 of an address
 * of its own (127.0.0.2-4, so run as root), found through a DNS server of the benchmark's own; the
 * traffic shaping allows 20 connections in all (7, 7 and 6) and no rate limit, and the sinks count
 * the connections they have open at once, so the run shows the limit held. Beside it, in the same
 * run, the baseline: nodemailer, pooled over the same connections per sink, sending the same
 * messages (same MIME builder, same DKIM key) straight to the sinks, before and after Postlane;
 * their mean is the figure compared. Every email must arrive exactly once.
 *
 *   node --import tsx test/bench/direct.bench.ts [--json] [--emails 20000] [--connections 50] [--timeout 600]
 *
 * Run `npm run build` first.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { startDnsServer } from '../support/dns-server.js';
import { type PostlaneProcess, SERVICE_NODE_FLAGS, spawnPostlane } from '../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { type SinkStats, startSmtpSinkProcess } from '../support/smtp-sink-client.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_EMAILS_PER_SECOND = 500;
const TARGET_RATIO = 0.8;
/** Messages a connection carries before it is closed, on both sides: the shipped default profile's. */
const MESSAGES_PER_CONNECTION = 100;

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    emails: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '50' },
    timeout: { type: 'string', default: '600' },
  },
});
const EMAILS = Number(args.emails);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

const FROM = 'Bench <news@bench.test>';
const SUBJECT = 'Your November update';
const HTML = `<p>Hello,</p><p>${'Here is what happened this month. '.repeat(20)}</p><p>See you soon.</p>`;
const TEXT = 'Hello,\n\nHere is what happened this month.\n';

/** The recipient domains, each with one MX host of its own (an MX group), its address and its share of the 20 connections. */
const GROUPS = [
  { domain: 'a.direct-bench.test', mx: 'mx.a.direct-bench.test', address: '127.0.0.2', connections: 7 },
  { domain: 'b.direct-bench.test', mx: 'mx.b.direct-bench.test', address: '127.0.0.3', connections: 7 },
  { domain: 'c.direct-bench.test', mx: 'mx.c.direct-bench.test', address: '127.0.0.4', connections: 6 },
];
const CONNECTIONS = GROUPS.reduce((sum, group) => sum + group.connections, 0);
const recipientOf = (i: number) => `reader@${GROUPS[i % GROUPS.length]!.domain}`;

// --- The sinks, each in its own process, on port 25 of its MX host's address -------------------
const starting = await Promise.allSettled(GROUPS.map((group) => startSmtpSinkProcess(group.address, 25)));
const sinks = starting.flatMap((started) => (started.status === 'fulfilled' ? [started.value] : []));
const cannotListen = starting.find((started) => started.status === 'rejected');
if (cannotListen) {
  for (const sink of sinks) sink.close();
  throw new Error(
    `${(cannotListen.reason as Error).message}. The benchmark needs port 25 of ${GROUPS.map((g) => g.address).join(', ')} free, and root to bind it.`,
  );
}
const allStats = (options: { ids?: boolean } = {}) => Promise.all(sinks.map((sink) => sink.stats(options)));
const resetSinks = () => Promise.all(sinks.map((sink) => sink.reset()));
const receivedIn = (stats: SinkStats[]) => stats.reduce((sum, s) => sum + s.received, 0);
/**
 * Waits until `count` messages have arrived in all (or the deadline), polling the sinks for their
 * counts only: tens of thousands of Message-IDs ten times a second would take CPU from the senders
 * measured. The IDs are read once, at the end.
 */
async function arrived(count: number, deadline: number): Promise<SinkStats[]> {
  while (receivedIn(await allStats({ ids: false })) < count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return allStats();
}
/** Waits until no connection is open at any sink, so the next phase's connection count starts from 0. */
async function drained(deadline: number): Promise<void> {
  while ((await allStats({ ids: false })).some((s) => s.openConnections > 0) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
}
/** What the sinks' figures say together: every Message-ID seen, copies beyond the first (within and across sinks). */
function tally(stats: SinkStats[]) {
  const ids = new Set<string>();
  let copies = 0;
  for (const s of stats)
    for (const id of s.ids) {
      if (ids.has(id)) copies += 1;
      ids.add(id);
    }
  return {
    received: receivedIn(stats),
    duplicates: stats.reduce((sum, s) => sum + s.duplicates, 0) + copies,
    lastAt: Math.max(...stats.map((s) => s.lastAt)),
    ids,
    maxConnections: stats.map((s) => s.maxConnections),
  };
}

const dns = await startDnsServer();
for (const group of GROUPS) {
  dns.set('MX', group.domain, [`10 ${group.mx}`]);
  dns.set('A', group.mx, [group.address]);
  dns.set('AAAA', group.mx, []);
}

// The limits: connections per group as above, messages per connection as the baseline's, no rate.
const shapingDir = mkdtempSync(join(tmpdir(), 'postlane-direct-bench-'));
const shapingFile = join(shapingDir, 'shaping.json');
const unlimited = {
  messagesPerConnection: MESSAGES_PER_CONNECTION,
  messagesPerSecond: null,
  messagesPerHour: null,
  connectionsPerMinute: null,
};
writeFileSync(
  shapingFile,
  JSON.stringify({
    profiles: Object.fromEntries(
      GROUPS.map((group, i) => [
        `bench-${i}`,
        {
          mxSuffixes: [group.mx],
          connections: group.connections,
          ...unlimited,
          source: 'the direct delivery benchmark',
        },
      ]),
    ),
  }),
);

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
const processes: PostlaneProcess[] = [];
try {
  const providers = JSON.stringify([{ type: 'direct', regions: ['us-east-1'], ehlo_name: 'out.bench.test' }]);
  const env = {
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_PROVIDERS: providers,
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_SHAPING_FILE: shapingFile,
  };
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
    // A team sending from a verified domain that Postlane signs for.
    const { token, dkim } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      const domain = await createDomain(deps, team.id, { name: 'bench.test' });
      await orm.em.nativeUpdate(
        Domain,
        { id: domain.id },
        { status: 'verified', verifiedAt: new Date(), nextCheckAt: null },
      );
      const { token } = await createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' });
      const { dkim } = (await senderDomainsForEmails(deps, [{ team: { id: team.id } as never, from: FROM }]))[0]!;
      return { token, dkim };
    });

    const baseline = async (label: string) => {
      await drained(Date.now() + 10_000);
      await resetSinks();
      // A pool per MX host, with that group's share of the connections, as Postlane's shaping allows.
      const transports = GROUPS.map((group) =>
        nodemailer.createTransport({
          pool: true,
          host: group.address,
          port: 25,
          secure: false,
          maxConnections: group.connections,
          maxMessages: MESSAGES_PER_CONNECTION,
          rateDelta: 1000,
          rateLimit: 10_000,
          ...SAFE_TRANSPORT_OPTIONS,
        }),
      );
      progress(`baseline (${label}): nodemailer, ${CONNECTIONS} pooled connections to 3 MX hosts, ${EMAILS} messages…`);
      const started = Date.now();
      // The message Postlane would build for the same email, built by the same code.
      await Promise.all(
        Array.from({ length: EMAILS }, (_, i) => {
          const to = recipientOf(i);
          return transports[i % GROUPS.length]!.sendMail(
            toNodemailerMessage({
              emailId: `baseline-${i}`,
              messageId: `<baseline-${label}-${i}@bench.test>`,
              from: { name: 'Bench', address: 'news@bench.test' },
              to: [{ name: null, address: to }],
              cc: [],
              bcc: [],
              replyTo: [],
              envelopeTo: [to],
              subject: SUBJECT,
              html: HTML,
              text: TEXT,
              headers: {},
              attachments: [],
              dkim,
            }),
          );
        }),
      );
      const stats = tally(await arrived(EMAILS, Date.now() + 10_000));
      for (const transport of transports) transport.close();
      return {
        emailsPerSecond: (stats.received * 1000) / (stats.lastAt - started),
        received: stats.received,
        duplicates: stats.duplicates,
        maxConnections: stats.maxConnections,
      };
    };

    const before = await baseline('before');

    progress('postlane: starting an API and a worker process…');
    const api = spawnPostlane(
      ['serve', '--role', 'api'],
      { ...env, POSTLANE_PORT: '0', POSTLANE_LOG_LEVEL: 'info' },
      SERVICE_NODE_FLAGS,
    );
    const worker = spawnPostlane(
      ['serve', '--role', 'worker'],
      { ...env, POSTLANE_LOG_LEVEL: 'info' },
      SERVICE_NODE_FLAGS,
    );
    processes.push(api, worker);
    await Promise.all([
      api.waitForOutput(/postlane started/, 60_000),
      worker.waitForOutput(/postlane started/, 60_000),
    ]);
    const apiUrl = /"url":"(http:[^"]+)"/.exec(api.output())![1]!;

    await drained(Date.now() + 10_000);
    await resetSinks();
    progress(`postlane: ${EMAILS} POST /emails at ${args.connections} connections, delivered through the worker…`);
    const started = Date.now();
    const posted = await autocannon({
      url: `${apiUrl}/emails`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      // Each connection goes through the three domains in turn: a third of the emails to each group.
      requests: GROUPS.map((_, i) => ({
        body: JSON.stringify({ from: FROM, to: [recipientOf(i)], subject: SUBJECT, html: HTML, text: TEXT }),
      })),
      connections: Number(args.connections),
      amount: EMAILS,
      // A response slower than autocannon's default 10 s is still an accepted email, not an error.
      timeout: 120,
    });
    const acceptedFor = Date.now() - started;
    const expected = Number((await pool.query(`SELECT count(*) AS n FROM email`)).rows[0].n);
    const delivered = tally(await arrived(expected, Date.now() + Number(args.timeout) * 1000));
    const postlaneRate = (delivered.received * 1000) / (delivered.lastAt - started);

    // Exactly once: every stored email's Message-ID arrived, once, and nothing else did. The last
    // outcomes are written just after the sinks accepted their messages: give them a moment.
    const unsettled = async () =>
      Number((await pool.query(`SELECT count(*) AS n FROM email WHERE status <> 'sent'`)).rows[0].n);
    for (const settleBy = Date.now() + 30_000; (await unsettled()) > 0 && Date.now() < settleBy;)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const stored = (await pool.query<{ message_id: string; status: string }>(`SELECT message_id, status FROM email`))
      .rows;
    const missing = stored.filter((row) => !delivered.ids.has(row.message_id)).length;
    const notSent = stored.filter((row) => row.status !== 'sent').length;
    const statuses = Object.fromEntries(
      (
        await pool.query<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM email GROUP BY status`)
      ).rows.map((row) => [row.status, Number(row.n)]),
    );

    for (const proc of processes.splice(0)) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    const after = await baseline('after');

    const baselineRate = (before.emailsPerSecond + after.emailsPerSecond) / 2;
    const ratio = postlaneRate / baselineRate;
    const limitsHeld = GROUPS.every((group, i) => delivered.maxConnections[i]! <= group.connections);
    const result = {
      settings: {
        emails: EMAILS,
        apiConnections: Number(args.connections),
        smtpConnections: Object.fromEntries(GROUPS.map((group) => [group.mx, group.connections])),
        messagesPerConnection: MESSAGES_PER_CONNECTION,
      },
      loadAverageBefore: loadBefore,
      loadAverageAfter: Number(loadavg()[0]!.toFixed(2)),
      baseline: {
        before: Math.round(before.emailsPerSecond),
        after: Math.round(after.emailsPerSecond),
        mean: Math.round(baselineRate),
        maxConnections: { before: before.maxConnections, after: after.maxConnections },
      },
      postlane: {
        emailsPerSecond: Math.round(postlaneRate),
        acceptedPerSecond: Math.round((posted['2xx'] * 1000) / acceptedFor),
        non2xx: posted.non2xx,
        errors: posted.errors + posted.timeouts,
        // The most connections each sink had open at once, in GROUPS' order, against each group's limit.
        maxConnections: delivered.maxConnections,
        connectionLimitsHeld: limitsHeld,
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
        statuses,
        exactlyOnce: delivered.received === expected && delivered.duplicates === 0 && missing === 0,
        baselineExactlyOnce:
          before.received === EMAILS && after.received === EMAILS && before.duplicates + after.duplicates === 0,
      },
    };
    // Figures that do not add up, or a connection limit exceeded, mean the run is wrong, not that a target was missed.
    if (!result.sanity.exactlyOnce || !result.sanity.baselineExactlyOnce || notSent > 0 || !limitsHeld)
      process.exitCode = 1;
    reportHeadlines({
      what: `Direct delivery: API → worker → 3 MX groups on port 25, ${CONNECTIONS} connections, DKIM-signed`,
      figure: perSecond(postlaneRate, 'emails'),
      baseline: `nodemailer pooled to the same MX hosts: ${perSecond(baselineRate, 'emails')}`,
      ratio: result.ratio,
      target: targetMet(
        `≥ ${TARGET_EMAILS_PER_SECOND}/s, ratio ≥ ${TARGET_RATIO}`,
        result.targets.emailsPerSecond.met && result.targets.ratio.met,
      ),
    });
    if (args.json) console.log(JSON.stringify(result, null, 2));
    else {
      const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
      const perSink = (counts: number[]) =>
        GROUPS.map((group, i) => `${group.address} ${counts[i]}/${group.connections}`).join(', ');
      console.log(
        `\n${EMAILS} emails to 3 MX groups, ${args.connections} API connections, ${CONNECTIONS} SMTP connections, DKIM-signed (load average before: ${loadBefore}, after: ${result.loadAverageAfter})`,
      );
      console.log(
        `baseline (nodemailer pooled)        ${result.baseline.mean} emails/s   (before ${result.baseline.before}, after ${result.baseline.after})`,
      );
      console.log(
        `postlane POST /emails → MX port 25  ${result.postlane.emailsPerSecond} emails/s   ratio ${result.ratio}   (accepted at ${result.postlane.acceptedPerSecond}/s)`,
      );
      console.log(
        `\nmost connections open at once (seen by each sink / limit): postlane ${perSink(delivered.maxConnections)}: ${limitsHeld ? 'limits held' : 'LIMIT EXCEEDED'}; ` +
          `baseline ${perSink(before.maxConnections)} before, ${perSink(after.maxConnections)} after`,
      );
      console.log(
        `\ntarget >= ${TARGET_EMAILS_PER_SECOND} emails/s: ${met(result.targets.emailsPerSecond.met)} (${result.targets.emailsPerSecond.value})`,
      );
      console.log(`target ratio >= ${TARGET_RATIO}: ${met(result.targets.ratio.met)} (${result.targets.ratio.value})`);
      console.log(
        `sanity: ${result.sanity.accepted} accepted, ${expected} stored, ${delivered.received} received, ${delivered.duplicates} duplicates, ` +
          `${missing} missing, ${notSent} not marked sent (${JSON.stringify(statuses)}): ${result.sanity.exactlyOnce ? 'exactly once' : 'MISMATCH'}; baseline ${result.sanity.baselineExactlyOnce ? 'ok' : 'MISMATCH'}`,
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
  for (const sink of sinks) sink.close();
  await dns.close();
  rmSync(shapingDir, { recursive: true, force: true });
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}
