import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceivedEmail } from '../../../server/entities/index.js';
import { type InboundListener, startInboundListener } from '../../../server/services/inbound/listener.js';
import { startDnsServer } from '../../support/dns-server.js';
import { spawnPostlane } from '../../support/postlane-process.js';
import { smtpConnect } from '../../support/smtp-client.js';
import { useTestApp } from '../../support/test-app.js';
import { freePort } from '../../support/throwaway-cluster.js';
import { until } from '../../support/until.js';

// Issue 33, findings 1-3, past the limits: with the header limits raised as far as they go, the attacks
// reach mailauth and mailparser, now in the mail workers under a 1 s deadline. Before, the
// folded header held the event loop 13.6 s (`/health` 9.0 s), 300 signatures 6.7 s, and 1,000 parts
// never settled, so their DATA budget was never released.
const dns = await startDnsServer();
const DEADLINE_MS = 1000;
const app = useTestApp({
  env: {
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_DNS_TIMEOUT_MS: '1000',
    POSTLANE_INBOUND_MAX_MESSAGE_MB: '1',
    // Megabytes from one address: the per-IP byte rate is not what this file tests.
    POSTLANE_INBOUND_MB_PER_MINUTE: '100000',
    POSTLANE_INBOUND_MAX_HEADER_KB: '1024',
    POSTLANE_INBOUND_MAX_HEADER_LINES: '100000',
    POSTLANE_INBOUND_PARSE_DEADLINE_MS: String(DEADLINE_MS),
  },
});
const inbound = `in-${randomBytes(4).toString('hex')}.test`;
let listener: InboundListener;
let teamId: string;

beforeAll(async () => {
  ({ teamId } = await app.createTeamWithKey('full_access', { receivingDomains: [inbound] }));
  listener = await startInboundListener(app.deps, { host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await listener?.close();
  await dns.close();
});

const head = `From: a@elsewhere.test\r\nTo: desk@${inbound}\r\nSubject: hostile\r\n`;
const folded = `${head}X-F: a${'\r\n b'.repeat(60_000)}\r\n\r\nbody\r\n`;
const envelope = { mailFrom: 'a@elsewhere.test', peerIp: '192.0.2.1', helo: 'client.test' };

/** Sends one message from a unique envelope sender; the reply and the row stored for it. */
async function send(message: string, port = listener.port, timeoutMs?: number) {
  const sender = `attack-${randomBytes(4).toString('hex')}@elsewhere.test`;
  const client = await smtpConnect(port);
  await client.greeting;
  await client.command('EHLO client.test');
  expect((await client.command(`MAIL FROM:<${sender}>`)).code).toBe(250);
  expect((await client.command(`RCPT TO:<desk@${inbound}>`)).code).toBe(250);
  const reply = await client.data(message, timeoutMs);
  client.close();
  const row = await app.run(() =>
    app.deps.orm.em.findOne(ReceivedEmail, { team: teamId, envelopeFrom: sender }, { populate: ['raw'] }),
  );
  return { reply, row };
}

/** The longest event-loop stall while `work` runs, in ms. */
async function stallDuring<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const result = await work();
  delay.disable();
  return { result, stallMs: delay.max / 1e6 };
}

describe('mail workers under a deadline', () => {
  it('answers /health while 60,000 folded header lines hold a worker, and stores the message raw (finding 1)', async () => {
    let settled = false;
    const sent = send(folded).finally(() => (settled = true));
    const healthMs: number[] = [];
    while (!settled) {
      const started = performance.now();
      expect((await app.request('GET', '/health')).status).toBe(200);
      healthMs.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { reply, row } = await sent;
    expect(reply.code).toBe(250);
    expect(healthMs.length).toBeGreaterThan(5);
    expect(Math.max(...healthMs)).toBeLessThan(1000);
    expect(row!.spf.result).toBe('temperror');
    expect(row!.dmarc.comment).toMatch(/POSTLANE_INBOUND_PARSE_DEADLINE_MS/);
    expect(row!.raw.unwrap()!.length).toBe(row!.size);
    expect(listener.heldBytes()).toBe(0);
  });

  it('checks 300 DKIM signatures over a 1 MB body beside the event loop, within the deadline (finding 2)', async () => {
    const signatures = Array.from(
      { length: 300 },
      (_, i) =>
        `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=elsewhere.test; s=sel; l=${1000 + i}; h=from:to:subject; bh=${Buffer.alloc(32, i).toString('base64')}; b=${randomBytes(16).toString('base64')}\r\n`,
    ).join('');
    const raw = Buffer.from(`${signatures}${head}\r\n${`${'x'.repeat(998)}\r\n`.repeat(1050)}`);
    const { result, stallMs } = await stallDuring(() => app.deps.mailWork.authenticate(raw, envelope));
    expect(stallMs).toBeLessThan(1000);
    // Verified in full on a fast machine, ended at the deadline on a slow one: either way beside the event loop.
    if (result.dkim.length !== 300) expect(result.dmarc.comment).toMatch(/POSTLANE_INBOUND_PARSE_DEADLINE_MS/);
  });

  it('settles the 1,000-part message in a worker, beside the event loop, and parses the next (finding 3)', async () => {
    // mailparser 3.9.3 on Node 20 settles this in about 0.4 s; a parser that does not is ended at the deadline.
    const part = '--b\r\nContent-Type: text/plain\r\n\r\n' + 'y'.repeat(958) + '\r\n';
    const raw = Buffer.from(
      `${head}MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${part.repeat(1000)}--b--\r\n`,
    );
    const { stallMs } = await stallDuring(() => app.deps.mailWork.parse(raw));
    expect(stallMs).toBeLessThan(1000);
    const next = await app.deps.mailWork.parse(Buffer.from(`${head}__proto__: polluted\r\n\r\nlegitimate\r\n`));
    expect(next).toMatchObject({ subject: 'hostile', parseError: null, text: 'legitimate\n' });
    // Across the thread boundary the header map keeps its null prototype and its own `__proto__` field.
    expect(Object.getPrototypeOf(next.headers)).toBeNull();
    expect(Object.getOwnPropertyDescriptor(next.headers, '__proto__')?.value).toBe('polluted');
  });

  it('reads a few-KB message at once while large ones hold their own thread, niced, up to their deadline', async () => {
    // 180 KB of folded header lines, each message held until the deadline: the large lane is busy for seconds.
    const large = Array.from({ length: 3 }, () => app.deps.mailWork.authenticate(Buffer.from(folded), envelope));
    let largeSettled = 0;
    for (const verdicts of large) void verdicts.then(() => (largeSettled += 1));
    const small = await app.deps.mailWork.parse(Buffer.from(`${head}\r\nlegitimate\r\n`));
    expect(small).toMatchObject({ subject: 'hostile', parseError: null });
    expect(largeSettled).toBe(0);
    // On Linux the large lane's thread runs 10 nice values lower than the process, and only it (once
    // its module has loaded: the thread may still be starting when the small message is done).
    const started = getPriority();
    const niceness = () =>
      readdirSync('/proc/self/task').map((task) =>
        Number(readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]),
      );
    await until(
      () => niceness().includes(Math.min(19, started + 10)),
      20_000,
      () => `nice values: ${niceness()}`,
    );
    expect(niceness()).toContain(started);
    await Promise.all(large);
  });

  it('releases the DATA budget of 8 messages of 998 KB past their deadline, keeps a quarter of it for small mail meanwhile, and the next message gets 250 (finding 3)', async () => {
    // POSTLANE_INBOUND_MAX_MESSAGE_MB=1: a budget of 8 MB, which 8 such messages held for ever before.
    const message = `${folded}${`${'z'.repeat(998)}\r\n`.repeat(750)}`;
    expect(message.length).toBeGreaterThan(990_000);
    expect(message.length).toBeLessThan(1_000_000);
    // The thread for large messages takes them one by one, each up to its deadline and a new thread
    // after each (from the TypeScript sources, seconds apiece on a loaded machine): the last replies
    // come late. Before the pool kept its threads, the messages queued behind the first ones were never answered.
    const attacks = Promise.all(Array.from({ length: 8 }, () => send(message, listener.port, 180_000)));
    // Large messages hold at most 6 MB between them: a few-KB message is still taken while they wait.
    await until(async () => listener.heldBytes() > 5_000_000);
    expect((await send(`${head}\r\nsmall, meanwhile\r\n`)).reply.code).toBe(250);
    const replies = await attacks;
    const accepted = replies.filter(({ reply }) => reply.code === 250);
    expect(accepted.length).toBeGreaterThanOrEqual(6);
    for (const { reply } of replies.filter(({ reply }) => reply.code !== 250)) {
      expect(reply.code).toBe(451);
      expect(reply.text).toMatch(/too busy/i);
    }
    for (const { row } of accepted) expect(row!.spf.comment).toMatch(/POSTLANE_INBOUND_PARSE_DEADLINE_MS/);
    await until(async () => listener.heldBytes() === 0);
    const { reply, row } = await send(`${head}\r\nlegitimate\r\n`);
    expect(reply.code).toBe(250);
    expect(row!.parseError).toBeNull();
  }, 240_000);
});

describe('the process stdout', () => {
  it('stays JSON log lines when mailauth meets DKIM signatures whose l= is past the body', async () => {
    const port = await freePort();
    const child = spawnPostlane(['serve', '--role', 'inbound'], {
      DATABASE_URL: app.databaseUrl,
      POSTLANE_INBOUND_PORT: String(port),
      POSTLANE_INBOUND_HOST: '127.0.0.1',
      POSTLANE_DNS_SERVERS: dns.address,
      POSTLANE_DNS_TIMEOUT_MS: '1000',
    });
    let stdout = '';
    child.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      await child.waitForOutput(/postlane started/);
      const signatures = [1, 2, 3]
        .map(
          (i) =>
            `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=elsewhere.test; s=sel; l=9999${i}; h=from; bh=${Buffer.alloc(32, i).toString('base64')}; b=${randomBytes(16).toString('base64')}\r\n`,
        )
        .join('');
      const { reply, row } = await send(`${signatures}${head}\r\nshort body\r\n`, port);
      expect(reply.code).toBe(250);
      expect(row!.dkim).toHaveLength(3);
    } finally {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(lines.some((line) => line.includes('inbound smtp session'))).toBe(true);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(stdout).not.toMatch(/EXPECTING/);
  });
});
