/**
 * `npm run bench -- --only hostile`: the inbound listener and the API under the attacks of issue 33
 * (60,000 folded header lines, 300 DKIM signatures over 1 MB, 1,000 MIME parts, a 280 KB message whose
 * inline image 400 `cid:` references would inline 100 MB, fetched again and again through
 * `GET /emails/receiving/{id}`) from 8 SMTP connections (hostile-attacker.ts), while legitimate DKIM-signed mail arrives on 4
 * more and `POST /emails` runs beside it. The same run without the attacks is the baseline: the
 * figures are legitimate messages accepted per second (and their ratio), `/health` p99, the largest
 * RSS, replies 451 (a leaked DATA budget answers every later message so) and the bytes still held after.
 *
 *   node --import tsx test/bench/hostile.bench.ts [--json] [--seconds 15]
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import nodemailer from 'nodemailer';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { createApp } from '../../server/app.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { Domain } from '../../server/entities/index.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { createDomain } from '../../server/services/domains/create-domain.js';
import { type InboundListener, startInboundListener } from '../../server/services/inbound/listener.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { startDnsServer } from '../support/dns-server.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { smtpConnect } from '../support/smtp-client.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const TARGET_RATIO = 0.8;
const TARGET_HEALTH_P99_MS = 100;
const ATTACK_CONNECTIONS = 8;
const ATTACKER = fileURLToPath(new URL('./hostile-attacker.ts', import.meta.url));
const LEGITIMATE_CONNECTIONS = 4;

// As deployed: responses are not checked against their schemas in production.
process.env.NODE_ENV = 'production';

const { values: args } = parseArgs({
  options: { json: { type: 'boolean', default: false }, seconds: { type: 'string', default: '15' } },
});
const seconds = Number(args.seconds);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

const INBOUND = 'hostile-bench.test';
const SENDER = 'sender-bench.test';
/** The legitimate message of the inbound benchmark: a few KB, DKIM-signed, with an attachment. */
async function legitimateMessage(privateKey: string): Promise<string> {
  const built = await nodemailer
    .createTransport({
      streamTransport: true,
      buffer: true,
      dkim: { domainName: SENDER, keySelector: 'bench', privateKey },
    })
    .sendMail({
      from: `News <news@${SENDER}>`,
      to: `desk@${INBOUND}`,
      subject: 'Legitimate',
      text: 'Hello from the benchmark. '.repeat(60),
      html: `<p>${'Hello from the benchmark. '.repeat(60)}</p>`,
      attachments: [{ filename: 'report.csv', content: 'a,b,c\n1,2,3\n'.repeat(40) }],
    });
  return (built.message as Buffer).toString('latin1');
}

interface PhaseResult {
  legitimatePerSecond: number;
  apiEmailsPerSecond: number;
  healthP99Ms: number;
  healthMaxMs: number;
  /** The longest the event loop stalled: blocking work on it, or a machine too busy to run it. */
  eventLoopMaxMs: number;
  attacksSent: number;
  cidFetches: number;
  cidLargestBytes: number;
  replies451: number;
  otherFailures: number;
  heldBytesAfter: number;
}

const percentile = (values: number[], p: number) =>
  values.length === 0
    ? 0
    : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

const dns = await startDnsServer();
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
dns.set('TXT', SENDER, ['v=spf1 ip4:127.0.0.1 -all']);
dns.set('TXT', `_dmarc.${SENDER}`, ['v=DMARC1; p=reject']);
dns.set('TXT', `bench._domainkey.${SENDER}`, [
  `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
]);
const legitimate = await legitimateMessage(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());

let rssMaxMb = 0;
const rssTimer = setInterval(() => (rssMaxMb = Math.max(rssMaxMb, process.memoryUsage.rss() / 2 ** 20)), 100);

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
try {
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
    POSTLANE_DNS_SERVERS: dns.address,
    // Every connection comes from 127.0.0.1: the per-IP limits would stop the attacks before the parsers.
    POSTLANE_INBOUND_RATE_PER_MINUTE: '1000000',
    POSTLANE_INBOUND_MAX_CONNECTIONS_PER_IP: String(ATTACK_CONNECTIONS + LEGITIMATE_CONNECTIONS + 2),
    // A budget of 16 MB: what a leak would exhaust within seconds.
    POSTLANE_INBOUND_MAX_MESSAGE_MB: '2',
  });
  const orm = await initOrm(config, { pool: serverPool(config) });
  try {
    await migrate(config);
    const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
    const { token, teamId } = await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      const domain = await createDomain(deps, team.id, { name: INBOUND, receiving: true });
      await orm.em.nativeUpdate(Domain, { id: domain.id }, { status: 'verified', verifiedAt: new Date() });
      return { ...(await createApiKey(deps, team.id, { name: 'bench', permission: 'full_access' })), teamId: team.id };
    });
    const api = createServer(createApp(deps).callback()).listen(0, '127.0.0.1');
    await new Promise((resolve) => api.once('listening', resolve));
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const auth = { authorization: `Bearer ${token}` };
    const listener = await startInboundListener(deps, { host: '127.0.0.1', port: 0 });

    progress('warm-up: the mail workers and the connection pool…');
    await phase(listener, false, 2);
    progress(`clean: ${seconds} s of legitimate mail and POST /emails…`);
    const clean = await phase(listener, false, seconds);
    progress(`hostile: the same, with ${ATTACK_CONNECTIONS} attacking connections and cid fetches…`);
    const hostile = await phase(listener, true, seconds);
    await listener.close();
    api.close();
    await deps.mailWork.close();
    await deps.providers.close();
    report(clean, hostile);

    async function phase(listener: InboundListener, attacks: boolean, seconds: number): Promise<PhaseResult> {
      const endsAt = performance.now() + seconds * 1000;
      const running = () => performance.now() < endsAt;
      const health: number[] = [];
      let legitimateAccepted = 0;
      let apiEmails = 0;
      let attacksSent = 0;
      let cidFetches = 0;
      let cidLargestBytes = 0;
      let replies451 = 0;
      let otherFailures = 0;

      /** One SMTP session sending `next()` while the phase runs; counts 250s and 451s. */
      const session = async (next: () => string, accepted: () => void) => {
        const client = await smtpConnect(listener.port);
        try {
          await client.greeting;
          await client.command('EHLO client.bench.test');
          while (running()) {
            await client.command(`MAIL FROM:<news@${SENDER}>`);
            await client.command(`RCPT TO:<desk@${INBOUND}>`);
            const reply = await client.data(next(), 120_000);
            if (reply.code === 250) accepted();
            else if (reply.code === 451) replies451++;
            else otherFailures++;
          }
          await client.command('QUIT');
        } finally {
          client.close();
        }
      };
      const work: Promise<unknown>[] = [
        ...Array.from({ length: LEGITIMATE_CONNECTIONS }, () =>
          session(
            () => legitimate,
            () => legitimateAccepted++,
          ),
        ),
        (async () => {
          while (running()) {
            const started = performance.now();
            await fetch(`${apiUrl}/health`).then((response) => response.arrayBuffer());
            health.push(performance.now() - started);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })(),
        (async () => {
          while (running()) {
            const response = await fetch(`${apiUrl}/emails`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({
                from: 'Bench <bench@example.com>',
                to: ['user@example.com'],
                subject: 'Hi',
                html: '<p>Hi</p>',
              }),
            });
            await response.arrayBuffer();
            if (response.status === 200) apiEmails++;
            else otherFailures++;
          }
        })(),
      ];
      if (attacks) {
        work.push(
          // In a process of its own: the attackers' megabytes are not built and written on the event loop under test.
          promisify(execFile)(
            process.execPath,
            ['--import', 'tsx', ATTACKER, String(listener.port), INBOUND, String(seconds), String(ATTACK_CONNECTIONS)],
            { maxBuffer: 1024 * 1024 },
          ).then(({ stdout }) => {
            const counts = JSON.parse(stdout) as { accepted: number; replies451: number; other: number };
            attacksSent += counts.accepted;
            replies451 += counts.replies451;
            otherFailures += counts.other;
          }),
          (async () => {
            while (running()) {
              // The newest stored cid message, as the team's own `email.received` handler would fetch it.
              const [row] = await orm.em
                .fork()
                .getConnection()
                .execute<{ id: string }[]>(
                  `SELECT id FROM received_email WHERE team_id = ? AND subject = 'cid amplification' ORDER BY created_at DESC LIMIT 1`,
                  [teamId],
                );
              if (row) {
                const response = await fetch(`${apiUrl}/emails/receiving/${row.id}`, { headers: auth });
                cidLargestBytes = Math.max(cidLargestBytes, (await response.arrayBuffer()).byteLength);
                cidFetches++;
              } else await new Promise((resolve) => setTimeout(resolve, 100));
            }
          })(),
        );
      }
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const started = performance.now();
      await Promise.all(work);
      delay.disable();
      const elapsed = (performance.now() - started) / 1000;
      // Every message has had its reply: whatever was held must be back.
      return {
        legitimatePerSecond: legitimateAccepted / elapsed,
        apiEmailsPerSecond: apiEmails / elapsed,
        healthP99Ms: percentile(health, 0.99),
        healthMaxMs: Math.max(0, ...health),
        eventLoopMaxMs: delay.max / 1e6,
        attacksSent,
        cidFetches,
        cidLargestBytes,
        replies451,
        otherFailures,
        heldBytesAfter: listener.heldBytes(),
      };
    }
  } finally {
    await orm.close();
  }
} finally {
  clearInterval(rssTimer);
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await dns.close();
}

function report(clean: PhaseResult, hostile: PhaseResult) {
  const ratio = hostile.legitimatePerSecond / clean.legitimatePerSecond;
  const targets = {
    ratio: ratio >= TARGET_RATIO,
    healthP99: hostile.healthP99Ms < TARGET_HEALTH_P99_MS,
    no451: hostile.replies451 === 0 && clean.replies451 === 0,
    budgetReleased: hostile.heldBytesAfter === 0,
  };
  if (Object.values(targets).includes(false)) process.exitCode = 1;
  const round = (n: number) => Number(n.toFixed(1));
  const figures = {
    seconds,
    loadAverageBefore: loadBefore,
    clean: Object.fromEntries(Object.entries(clean).map(([k, v]) => [k, round(v)])),
    hostile: Object.fromEntries(Object.entries(hostile).map(([k, v]) => [k, round(v)])),
    ratio: Number(ratio.toFixed(3)),
    rssMaxMb: Math.round(rssMaxMb),
    targets,
  };
  reportHeadlines({
    what: 'Inbound under hostile mail, legitimate mail accepted',
    figure: `${perSecond(hostile.legitimatePerSecond, 'messages')}, /health p99 ${round(hostile.healthP99Ms)} ms`,
    baseline: `the same run without the attacks: ${perSecond(clean.legitimatePerSecond, 'messages')}`,
    ratio: Number(ratio.toFixed(3)),
    target: targetMet(
      `≥ ${TARGET_RATIO}, p99 < ${TARGET_HEALTH_P99_MS} ms, no 451`,
      Object.values(targets).every(Boolean),
    ),
  });
  if (args.json) {
    console.log(JSON.stringify(figures, null, 2));
    return;
  }
  const row = (name: string, a: number | string, b: number | string, note = '') =>
    console.log(`${name.padEnd(34)}${String(a).padStart(10)}${String(b).padStart(10)}  ${note}`);
  console.log(`\n${seconds} s per run; load average before: ${loadBefore}`);
  row('', 'clean', 'hostile');
  row(
    'legitimate messages accepted /s',
    round(clean.legitimatePerSecond),
    round(hostile.legitimatePerSecond),
    `ratio ${ratio.toFixed(3)} (target ≥ ${TARGET_RATIO})`,
  );
  row('POST /emails accepted /s', round(clean.apiEmailsPerSecond), round(hostile.apiEmailsPerSecond));
  row('/health p99 ms', round(clean.healthP99Ms), round(hostile.healthP99Ms), `target < ${TARGET_HEALTH_P99_MS}`);
  row('/health max ms', round(clean.healthMaxMs), round(hostile.healthMaxMs));
  row('event loop longest stall ms', round(clean.eventLoopMaxMs), round(hostile.eventLoopMaxMs));
  row('attack messages answered 250', clean.attacksSent, hostile.attacksSent);
  row('cid fetches (largest body, bytes)', clean.cidFetches, `${hostile.cidFetches} (${hostile.cidLargestBytes})`);
  row('451 replies', clean.replies451, hostile.replies451, 'target 0');
  row('other failures', clean.otherFailures, hostile.otherFailures);
  row('DATA bytes held after', clean.heldBytesAfter, hostile.heldBytesAfter, 'target 0');
  console.log(`largest RSS of the process: ${Math.round(rssMaxMb)} MB`);
  console.log(`targets: ${JSON.stringify(targets)}`);
}
