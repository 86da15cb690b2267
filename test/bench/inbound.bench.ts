/**
 * `npm run bench -- --only inbound`: messages per second accepted by the inbound SMTP listener
 * (RCPT lookup, SPF/DKIM/DMARC against a loopback DNS server, mailparser, the insert of raw,
 * parsed fields, attachment and `email.received` event before 250), beside a baseline measured in
 * the same run by the same client: a bare `smtp-server` that reads each message and discards it.
 * Both listen in this process, over loopback, with the same connections; the ratio is the figure.
 * The CPU time of the process per message (every thread, the client's included) is printed beside
 * each: on a machine others load, it says more than the rate. Each side first gets a tenth as many
 * messages unmeasured, so both are measured warm. Then the floor: the same messages
 * authenticated and parsed by the mail workers alone, the most the listener could reach here.
 *
 *   node --import tsx test/bench/inbound.bench.ts [--json] [--messages 2000] [--connections 8]
 */
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps, type Deps } from '../../server/deps.js';
import { Domain } from '../../server/entities/index.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { createDomain } from '../../server/services/domains/create-domain.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { createWebhook } from '../../server/services/webhooks/create-webhook.js';
import { startInboundListener } from '../../server/services/inbound/listener.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../support/db.js';
import { startDnsServer } from '../support/dns-server.js';
import { TEST_SECRET_KEY } from '../support/secrets.js';
import { smtpConnect } from '../support/smtp-client.js';
import { perSecond, reportHeadlines, targetMet } from './headline.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    messages: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '8' },
  },
});
const messages = Number(args.messages);
// Each side first gets a tenth as many messages unmeasured: both are measured warm (compiled, heap grown), as a running server is.
const warmup = Math.ceil(messages / 10);
const connections = Number(args.connections);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));

const INBOUND = 'inbound-bench.test';
const SENDER = 'sender-bench.test';

/** A DKIM-signed message of a few KB with an attachment, built once: every delivery sends the same bytes. */
async function benchMessage(privateKey: string): Promise<string> {
  const built = await nodemailer
    .createTransport({
      streamTransport: true,
      buffer: true,
      dkim: { domainName: SENDER, keySelector: 'bench', privateKey },
    })
    .sendMail({
      from: `News <news@${SENDER}>`,
      to: `desk@${INBOUND}`,
      subject: 'Inbound benchmark',
      text: 'Hello from the benchmark. '.repeat(60),
      html: `<p>${'Hello from the benchmark. '.repeat(60)}</p>`,
      attachments: [{ filename: 'report.csv', content: 'a,b,c\n1,2,3\n'.repeat(40) }],
    });
  return (built.message as Buffer).toString('latin1');
}

/** `connections` sessions, each sending its share of `count` one after another: every message must get 250. */
async function deliverAll(port: number, message: string, count = messages): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, lane) => {
      const client = await smtpConnect(port);
      try {
        if ((await client.greeting).code !== 220) throw new Error('no greeting');
        await client.command('EHLO client.bench.test');
        for (let i = lane; i < count; i += connections) {
          const steps = [
            await client.command(`MAIL FROM:<news@${SENDER}>`),
            await client.command(`RCPT TO:<desk@${INBOUND}>`),
            await client.data(message),
          ];
          const failed = steps.find((reply) => reply.code !== 250);
          if (failed) throw new Error(`message ${i}: ${failed.code} ${failed.text}`);
        }
        await client.command('QUIT');
      } finally {
        client.close();
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

const dns = await startDnsServer();
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
dns.set('TXT', SENDER, ['v=spf1 ip4:127.0.0.1 -all']);
dns.set('TXT', `_dmarc.${SENDER}`, ['v=DMARC1; p=reject']);
dns.set('TXT', `bench._domainkey.${SENDER}`, [
  `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
]);
const message = await benchMessage(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());

const dbName = uniqueDatabaseName('postlane_bench');
await adminQuery(`CREATE DATABASE "${dbName}"`);
try {
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: databaseUrl(dbName),
    POSTLANE_LOG_LEVEL: 'silent',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_INBOUND_RATE_PER_MINUTE: '1000000',
    POSTLANE_INBOUND_MB_PER_MINUTE: '100000',
    POSTLANE_INBOUND_MAX_CONNECTIONS_PER_IP: String(connections + 2),
  });
  const orm = await initOrm(config, { pool: serverPool(config) });
  try {
    await migrate(config);
    const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
    await RequestContext.create(orm.em, async () => {
      const team = await createTeam(deps, { name: 'Bench' });
      const domain = await createDomain(deps, team.id, { name: INBOUND, receiving: true });
      await orm.em.nativeUpdate(Domain, { id: domain.id }, { status: 'verified', verifiedAt: new Date() });
      // As a team that reads its mail by webhook: each message also writes an event and a delivery row.
      await createWebhook(deps, team.id, { url: 'http://127.0.0.1:9/received', events: ['email.received'] });
    });

    progress(`baseline: ${messages} messages to a bare smtp-server that discards them…`);
    const bare = new SMTPServer({
      logger: false,
      disableReverseLookup: true,
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      onData(stream, _session, callback) {
        stream.on('end', () => callback());
        stream.resume();
      },
    });
    bare.listen(0, '127.0.0.1');
    await once(bare.server, 'listening');
    const barePort = (bare.server.address() as AddressInfo).port;
    await deliverAll(barePort, message, warmup);
    const bareCpu = process.cpuUsage();
    const baselinePerSecond = await deliverAll(barePort, message);
    const baselineCpuMs = cpuMsPerMessage(process.cpuUsage(bareCpu));
    await new Promise<void>((resolve) => bare.close(() => resolve()));

    progress(`postlane: ${messages} messages through the inbound listener…`);
    const listener = await startInboundListener(deps, { host: '127.0.0.1', port: 0 });
    await deliverAll(listener.port, message, warmup);
    const cpuBefore = process.cpuUsage();
    const postlanePerSecond = await deliverAll(listener.port, message);
    const postlaneCpuMs = cpuMsPerMessage(process.cpuUsage(cpuBefore));
    await listener.close();

    progress(`floor: ${messages} messages authenticated and parsed by the mail workers alone…`);
    const floorCpu = process.cpuUsage();
    const floorPerSecond = await readAll(deps, Buffer.from(message, 'latin1'));
    const floorCpuMs = cpuMsPerMessage(process.cpuUsage(floorCpu));

    const [row] = await orm.em
      .fork()
      .getConnection()
      .execute<{ stored: number; signed: number }[]>(
        `SELECT count(*)::int AS stored, count(*) FILTER (WHERE dkim->0->>'result' = 'pass' AND dmarc->>'result' = 'pass')::int AS signed FROM received_email`,
      );
    report({
      baselinePerSecond,
      postlanePerSecond,
      baselineCpuMs,
      postlaneCpuMs,
      floorPerSecond,
      floorCpuMs,
      stored: row!.stored - warmup,
      verified: row!.signed - warmup,
    });
    await deps.providers.close();
  } finally {
    await orm.close();
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await dns.close();
}

/**
 * The floor under the listener: the same messages authenticated and parsed by the same mail
 * workers, `connections` at a time, with no SMTP and nothing stored. The listener cannot pass this
 * rate on this machine, however little the rest costs: it says how far the engine is from the
 * libraries it runs on, which the ratio to a bare smtp-server does not.
 */
async function readAll(deps: Deps, raw: Buffer): Promise<number> {
  const envelope = { mailFrom: `news@${SENDER}`, peerIp: '127.0.0.1', helo: 'client.bench.test' };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, lane) => {
      for (let i = lane; i < messages; i += connections) {
        const { verdicts, parsed } = await deps.mailWork.read(raw, envelope);
        if (verdicts.dkim[0]?.result !== 'pass' || parsed.parseError) throw new Error(`message ${i} did not read`);
      }
    }),
  );
  return messages / ((performance.now() - started) / 1000);
}

/** CPU time of this whole process (every thread: client, listener, mail workers) per message sent. */
function cpuMsPerMessage(used: NodeJS.CpuUsage): number {
  return Number(((used.user + used.system) / 1000 / messages).toFixed(2));
}

function report(r: {
  baselinePerSecond: number;
  postlanePerSecond: number;
  baselineCpuMs: number;
  postlaneCpuMs: number;
  floorPerSecond: number;
  floorCpuMs: number;
  stored: number;
  verified: number;
}) {
  const ratio = r.postlanePerSecond / r.baselinePerSecond;
  const sanity = { messages, stored: r.stored, allStored: r.stored === messages, dkimAndDmarcPass: r.verified };
  if (!sanity.allStored || r.verified !== messages) process.exitCode = 1;
  reportHeadlines({
    what: 'Inbound SMTP, stored with SPF, DKIM, DMARC',
    figure: perSecond(r.postlanePerSecond, 'messages'),
    baseline: `bare \`smtp-server\`, discarding: ${perSecond(r.baselinePerSecond, 'messages')}`,
    ratio: Number(ratio.toFixed(3)),
    target: targetMet('≥ 1,000/s, ratio ≥ 0.25', r.postlanePerSecond >= 1000 && ratio >= 0.25),
  });
  if (args.json) {
    console.log(
      JSON.stringify(
        {
          messages,
          connections,
          messageBytes: message.length,
          loadAverageBefore: loadBefore,
          baselinePerSecond: Math.round(r.baselinePerSecond),
          postlanePerSecond: Math.round(r.postlanePerSecond),
          baselineCpuMsPerMessage: r.baselineCpuMs,
          postlaneCpuMsPerMessage: r.postlaneCpuMs,
          ratio: Number(ratio.toFixed(3)),
          floorPerSecond: Math.round(r.floorPerSecond),
          floorCpuMsPerMessage: r.floorCpuMs,
          ratioToFloor: Number((r.postlanePerSecond / r.floorPerSecond).toFixed(3)),
          sanity,
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(
    `\n${messages} messages of ${message.length} bytes over ${connections} connections (load average before: ${loadBefore})`,
  );
  console.log(
    `baseline (bare smtp-server, discards)  ${Math.round(r.baselinePerSecond).toString().padStart(6)} /s   CPU ${r.baselineCpuMs} ms/message`,
  );
  console.log(
    `postlane inbound listener              ${Math.round(r.postlanePerSecond).toString().padStart(6)} /s   CPU ${r.postlaneCpuMs} ms/message   ratio ${ratio.toFixed(3)}`,
  );
  console.log(
    `floor: authenticated and parsed alone ${Math.round(r.floorPerSecond).toString().padStart(6)} /s   CPU ${r.floorCpuMs} ms/message   listener at ${(r.postlanePerSecond / r.floorPerSecond).toFixed(2)} of it`,
  );
  console.log(`sanity: ${r.stored} of ${messages} stored; ${r.verified} with DKIM and DMARC pass`);
}
