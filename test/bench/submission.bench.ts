/**
 * `npm run bench -- --only submission`: messages per second accepted by the SMTP submission listener
 * (AUTH with an API key, the parse, the POST /emails validation, sender rule,
 * suppression, quota and the outbox insert of the email, its raw MIME and recipients before 250),
 * beside a baseline measured in the same run by the same client: a bare `smtp-server` with the same
 * AUTH that reads each message into memory and discards it. Both listen in this
 * process, over loopback, with the same connections; the ratio is the figure. Then a flood: 32
 * sessions at once, each with a message just under the size limit (2 MB here, so the DATA budget is
 * 16 MB), while the listener's held bytes and the process's memory are sampled: every message gets
 * 250 or 451, the held bytes never pass the budget and are all given back. Each side first gets a
 * tenth as many messages unmeasured, so both are measured warm (compiled, heap grown), as a running
 * server is. Last, the floor: the same message parsed by the mail workers alone, the most the listener
 * could reach here.
 *
 *   node --import tsx test/bench/submission.bench.ts [--json] [--messages 3000] [--connections 8]
 */
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import { SMTPServer } from 'smtp-server';
import { selfSignedSubmissionCert } from '../../cli/services/submission-cert.js';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps, type Deps } from '../../server/deps.js';
import { Domain } from '../../server/entities/index.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { createDomain } from '../../server/services/domains/create-domain.js';
import { type SubmissionListener, startSubmissionListener } from '../../server/services/submission/listener.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { dataText, smtpConnect } from '../support/smtp-client.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    messages: { type: 'string', default: '3000' },
    connections: { type: 'string', default: '8' },
  },
});
const messages = Number(args.messages);
const warmup = Math.ceil(messages / 10);
const connections = Number(args.connections);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));
const SENDER = 'submission-bench.test';
/** The flood: sessions at once, and the size limit that sets the DATA budget (eight such messages). */
const FLOOD_SESSIONS = 32;
const FLOOD_MAX_MB = 2;

/** A message of about 5 KB, built once: every submission sends the same bytes. */
const message = [
  `From: App <app@${SENDER}>`,
  'To: reader@example.com',
  'Subject: Submission benchmark',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  '',
  ...Array.from({ length: 82 }, (_, i) => `Line ${i} of the submission benchmark, some words to fill it.`),
  '',
].join('\r\n');

/**
 * `connections` sessions, each authenticated once (AUTH PLAIN on the loopback plain port: TLS is
 * the same library's cost on both sides) and sending its share one after another, pipelined as
 * RFC 2920 lets a client: MAIL, RCPT and DATA in one write, and each message's final dot in the
 * same write as the next message's MAIL, RCPT and DATA, so a message costs one round trip. Every
 * message must get 250.
 */
const credentials = (password: string) => Buffer.from(`\0resend\0${password}`).toString('base64');
const envelope = `MAIL FROM:<app@${SENDER}>\r\nRCPT TO:<reader@example.com>\r\nDATA\r\n`;
const body = dataText(message);

/** This thread's CPU time in µs, where Linux tells it apart from the mail workers' (/proc, in ticks of 10 ms); else null. */
function mainThreadMicros(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

async function submitAll(
  port: number,
  password: string,
  count: number,
): Promise<{ perSecond: number; cpuMicrosPerMessage: number; mainCpuMicrosPerMessage: number | null }> {
  const cpu = process.cpuUsage();
  const mainCpu = mainThreadMicros();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, lane) => {
      const client = await smtpConnect(port);
      try {
        if ((await client.greeting).code !== 220) throw new Error('no greeting');
        await client.command('EHLO client.bench.test');
        const auth = await client.command(`AUTH PLAIN ${credentials(password)}`);
        if (auth.code !== 235) throw new Error(`AUTH: ${auth.code} ${auth.text}`);
        const expect = async (code: number, i: number) => {
          const reply = await client.read();
          if (reply.code !== code) throw new Error(`message ${i}: ${reply.code} ${reply.text}`);
        };
        client.write(envelope);
        for (let i = lane; i < count; i += connections) {
          await expect(250, i);
          await expect(250, i);
          await expect(354, i);
          client.write(body + (i + connections < count ? envelope : 'QUIT\r\n'));
          await expect(250, i);
        }
      } finally {
        client.close();
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  const mainUsed = mainThreadMicros();
  return {
    perSecond: count / ((performance.now() - started) / 1000),
    cpuMicrosPerMessage: (used.user + used.system) / count,
    mainCpuMicrosPerMessage: mainCpu === null || mainUsed === null ? null : (mainUsed - mainCpu) / count,
  };
}

/**
 * FLOOD_SESSIONS sessions at once, each sending one message just under the size limit; the held bytes
 * and the process's resident memory sampled meanwhile. Every session must get 250 or 451.
 */
async function flood(listener: SubmissionListener, password: string) {
  const large = [
    `From: App <app@${SENDER}>`,
    'To: reader@example.com',
    'Subject: Submission flood',
    '',
    `${'z'.repeat(76)}\r\n`.repeat(Math.floor((FLOOD_MAX_MB * 1024 * 1024 - 1024) / 78)),
  ].join('\r\n');
  const rssBefore = process.memoryUsage().rss;
  let peakHeld = 0;
  let peakRss = rssBefore;
  const sampler = setInterval(() => {
    peakHeld = Math.max(peakHeld, listener.heldBytes());
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 5);
  const replies = await Promise.all(
    Array.from({ length: FLOOD_SESSIONS }, async () => {
      const client = await smtpConnect(listener.ports.plain!);
      try {
        await client.greeting;
        await client.command('EHLO client.bench.test');
        await client.command(`AUTH PLAIN ${credentials(password)}`);
        await client.command(`MAIL FROM:<app@${SENDER}>`);
        await client.command('RCPT TO:<reader@example.com>');
        return (await client.data(large, 120_000)).code;
      } finally {
        client.close();
      }
    }),
  );
  clearInterval(sampler);
  return {
    messageBytes: large.length,
    accepted: replies.filter((code) => code === 250).length,
    deferred: replies.filter((code) => code === 451).length,
    budgetBytes: 8 * FLOOD_MAX_MB * 1024 * 1024,
    peakHeldBytes: peakHeld,
    heldAfter: listener.heldBytes(),
    rssGrowthMb: Math.round((peakRss - rssBefore) / 1024 / 1024),
  };
}

const tls = selfSignedSubmissionCert(mkdtempSync(join(tmpdir(), 'submission-bench-')), 'localhost')!;
const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
try {
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
    POSTLANE_SUBMISSION_PLAIN_PORT: '0',
    POSTLANE_SUBMISSION_TLS_CERT: tls.cert,
    POSTLANE_SUBMISSION_TLS_KEY: tls.key,
    POSTLANE_SUBMISSION_MAX_CONNECTIONS_PER_IP: String(Math.max(connections, FLOOD_SESSIONS) + 2),
    POSTLANE_SUBMISSION_MAX_MESSAGE_MB: String(FLOOD_MAX_MB),
  });
  const orm = await initOrm(config, { pool: serverPool(config) });
  try {
    await migrate(config);
    const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
    const token = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      const domain = await createDomain(deps, team.id, { name: SENDER });
      await orm.em.nativeUpdate(Domain, { id: domain.id }, { status: 'verified', verifiedAt: new Date() });
      return (await createApiKey(deps, team.id, { name: 'bench', permission: 'sending_access' })).token;
    });

    progress(`baseline: ${messages} messages to a bare smtp-server (same AUTH) that keeps them in memory…`);
    let kept = 0;
    const bare = new SMTPServer({
      logger: false,
      disableReverseLookup: true,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      onAuth: (_auth, _session, callback) => callback(null, { user: 'bench' }),
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          kept += Buffer.concat(chunks).length > 0 ? 1 : 0;
          callback(null, 'OK');
        });
      },
    });
    bare.listen(0, '127.0.0.1');
    await once(bare.server, 'listening');
    const barePort = (bare.server.address() as AddressInfo).port;
    await submitAll(barePort, 'x', warmup);
    const baseline = await submitAll(barePort, 'x', messages);
    await new Promise<void>((resolve) => bare.close(() => resolve()));

    progress(`postlane: ${messages} messages through the submission listener…`);
    const listener = await startSubmissionListener(deps);
    await submitAll(listener.ports.plain!, token, warmup);
    const postlane = await submitAll(listener.ports.plain!, token, messages);
    progress(`flood: ${FLOOD_SESSIONS} sessions at once, each with a message of ${FLOOD_MAX_MB} MB…`);
    const flooded = await flood(listener, token);
    await listener.close();
    progress(`floor: ${messages} messages parsed by the mail workers alone…`);
    const floor = await parseAll(deps, Buffer.from(message));

    const [row] = await orm.em
      .fork()
      .getConnection()
      .execute<{ stored: number }[]>(`SELECT count(*)::int AS stored FROM email WHERE raw_mime IS NOT NULL`);
    report({
      baseline,
      postlane,
      floor,
      stored: row!.stored - flooded.accepted - warmup,
      kept: kept - warmup,
      flooded,
    });
    await deps.providers.close();
  } finally {
    await orm.close();
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}

/**
 * The floor under the listener: the same message parsed by the same mail workers, `connections` at
 * a time, with no SMTP, no validation and nothing stored. The listener cannot pass this rate on this
 * machine, however little the rest costs.
 */
async function parseAll(deps: Deps, raw: Buffer): Promise<{ perSecond: number; cpuMicrosPerMessage: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, lane) => {
      for (let i = lane; i < messages; i += connections)
        if ((await deps.mailWork.parse(raw)).parseError) throw new Error(`message ${i} did not parse`);
    }),
  );
  const used = process.cpuUsage(cpu);
  return {
    perSecond: messages / ((performance.now() - started) / 1000),
    cpuMicrosPerMessage: (used.user + used.system) / messages,
  };
}

function report(r: {
  baseline: Awaited<ReturnType<typeof submitAll>>;
  postlane: Awaited<ReturnType<typeof submitAll>>;
  floor: Awaited<ReturnType<typeof parseAll>>;
  stored: number;
  kept: number;
  flooded: Awaited<ReturnType<typeof flood>>;
}) {
  const ratio = r.postlane.perSecond / r.baseline.perSecond;
  const f = r.flooded;
  const floodAnswered = f.accepted + f.deferred === FLOOD_SESSIONS;
  const sanity = {
    messages,
    stored: r.stored,
    allStored: r.stored === messages,
    baselineKept: r.kept,
    floodAnswered,
    floodWithinBudget: f.peakHeldBytes <= f.budgetBytes && f.heldAfter === 0,
  };
  if (!sanity.allStored || r.kept !== messages || !floodAnswered || !sanity.floodWithinBudget) process.exitCode = 1;
  reportHeadlines({
    what: 'SMTP submission, authenticated, pipelined, stored with its MIME',
    figure: perSecond(r.postlane.perSecond, 'messages'),
    baseline: `bare \`smtp-server\`, in memory: ${perSecond(r.baseline.perSecond, 'messages')}`,
    ratio: Number(ratio.toFixed(3)),
    target: targetMet('≥ 1,000/s, ratio ≥ 0.3', r.postlane.perSecond >= 1000 && ratio >= 0.3),
  });
  if (args.json) {
    console.log(
      JSON.stringify(
        {
          messages,
          connections,
          messageBytes: message.length,
          loadAverageBefore: loadBefore,
          baselinePerSecond: Math.round(r.baseline.perSecond),
          postlanePerSecond: Math.round(r.postlane.perSecond),
          // The whole process (client, listener, mail workers, GC), not the database's backends.
          baselineCpuMicrosPerMessage: Math.round(r.baseline.cpuMicrosPerMessage),
          postlaneCpuMicrosPerMessage: Math.round(r.postlane.cpuMicrosPerMessage),
          // The event loop's share (SMTP, validation, the database client), without the mail workers.
          baselineMainThreadCpuMicrosPerMessage:
            r.baseline.mainCpuMicrosPerMessage && Math.round(r.baseline.mainCpuMicrosPerMessage),
          postlaneMainThreadCpuMicrosPerMessage:
            r.postlane.mainCpuMicrosPerMessage && Math.round(r.postlane.mainCpuMicrosPerMessage),
          ratio: Number(ratio.toFixed(3)),
          target: { perSecond: 1000, ratio: 0.3 },
          floorPerSecond: Math.round(r.floor.perSecond),
          floorCpuMicrosPerMessage: Math.round(r.floor.cpuMicrosPerMessage),
          ratioToFloor: Number((r.postlane.perSecond / r.floor.perSecond).toFixed(3)),
          flood: { sessions: FLOOD_SESSIONS, ...f },
          sanity,
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(
    `\n${messages} messages of ${message.length} bytes over ${connections} authenticated connections, pipelined (load average before: ${loadBefore})`,
  );
  const cpu = (phase: typeof r.baseline) =>
    `${(phase.cpuMicrosPerMessage / 1000).toFixed(2)} ms CPU a message` +
    (phase.mainCpuMicrosPerMessage === null
      ? ''
      : ` (main thread ${(phase.mainCpuMicrosPerMessage / 1000).toFixed(2)})`);
  console.log(
    `baseline (bare smtp-server, in memory) ${Math.round(r.baseline.perSecond).toString().padStart(6)} /s   ${cpu(r.baseline)}`,
  );
  console.log(
    `postlane submission listener           ${Math.round(r.postlane.perSecond).toString().padStart(6)} /s   ${cpu(r.postlane)}   ratio ${ratio.toFixed(3)}   (target ≥ 1,000 /s and ≥ 0.3)`,
  );
  console.log(
    `floor: parsed alone                    ${Math.round(r.floor.perSecond).toString().padStart(6)} /s   ${(r.floor.cpuMicrosPerMessage / 1000).toFixed(2)} ms CPU a message   listener at ${(r.postlane.perSecond / r.floor.perSecond).toFixed(2)} of it`,
  );
  console.log(
    '(CPU: this whole process, client included, the database not; the main thread is the event loop without the mail workers; on a loaded machine the most stable figures)',
  );
  console.log(`sanity: ${r.stored} of ${messages} stored with their MIME; baseline kept ${r.kept}`);
  console.log(
    `flood: ${FLOOD_SESSIONS} × ${(f.messageBytes / 1024 / 1024).toFixed(1)} MB at once: ${f.accepted} × 250, ${f.deferred} × 451; ` +
      `held at most ${(f.peakHeldBytes / 1024 / 1024).toFixed(1)} MB of a ${f.budgetBytes / 1024 / 1024} MB budget (${f.heldAfter} after); resident memory +${f.rssGrowthMb} MB`,
  );
}
