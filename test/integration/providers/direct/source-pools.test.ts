import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type ProviderConfig } from '../../../../config/index.js';
import { initOrm } from '../../../../server/db/orm.js';
import { DnsResolver } from '../../../../server/dns/resolver.js';
import { createBounceClassifier } from '../../../../server/mail/bounce-classifier.js';
import type { OutboundMessage } from '../../../../server/mail/outbound-message.js';
import { DirectProvider } from '../../../../server/providers/direct/direct.provider.js';
import { loadShapingProfiles, type ShapingProfiles } from '../../../../server/providers/direct/shaping-profiles.js';
import { sourceIdentities } from '../../../../server/providers/direct/source-ips.js';
import { PgWarmup, type WarmupTicket } from '../../../../server/providers/direct/warmup.js';
import type { SendResult } from '../../../../server/providers/provider.js';
import { SmtpProvider } from '../../../../server/providers/smtp.provider.js';
import { createTestDatabase, queryDatabase } from '../../../support/db.js';
import { startDnsServer } from '../../../support/dns-server.js';
import { RecordingShaper } from '../../../support/recording-shaper.js';
import { startSmtpSink } from '../../../support/smtp-sink.js';

type DirectConfig = Extract<ProviderConfig, { type: 'direct' }>;

/** The recipients' MX: who connected (source address, EHLO name) for each message. */
async function startMx() {
  const received: { to: string[]; from: string; ehlo: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          from: session.remoteAddress.replace(/^::ffff:/, ''),
          ehlo: session.hostNameAppearsAs,
        });
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** Two ORMs on one database: two worker hosts. */
let orms: MikroORM[];
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let resolver: DnsResolver;
let mx: Awaited<ReturnType<typeof startMx>>;
let relaySink: Awaited<ReturnType<typeof startSmtpSink>>;
let dir: string;
let profiles: ShapingProfiles;
/** Both hosts' clock, set by the tests. */
let now = new Date('2027-01-11T10:00:00.000Z');
const WARMUP_FROM = '2027-01-11';
const DAY_MS = 86_400_000;
const classifyReply = createBounceClassifier();
const providers: DirectProvider[] = [];

/** A direct provider on `host` (0 or 1) whose every recipient domain's MX is the sink. */
function provider(config: Partial<DirectConfig>, host = 0): DirectProvider {
  const relay = new SmtpProvider(
    { type: 'smtp', regions: ['relay'], url: relaySink.url, max_connections: 1, rate_per_second: 50 },
    5_000,
    'postlane',
  );
  const direct = new DirectProvider(
    { type: 'direct', regions: ['direct'], ehlo_name: 'out.postlane.test', rate_per_second: 100, ...config },
    {
      dns: resolver,
      shaper: new RecordingShaper(),
      classifyReply,
      stsPolicy: async () => ({ kind: 'none', reason: 'no policy published' }),
      shapingProfile: () => 'default',
      random: () => 0,
      warmup: new PgWarmup({ orm: orms[host]!, clock: () => now, profiles }),
      relay: (region) => {
        expect(region).toBe('relay');
        return relay;
      },
    },
    { timeoutMs: 5_000, dkimSelector: 'postlane', port: mx.port },
  );
  providers.push(direct);
  return direct;
}

function message(to: string, ipPool?: string): OutboundMessage {
  const id = randomUUID();
  return {
    emailId: id,
    messageId: `<${id}@sender.test>`,
    from: { name: null, address: 'news@sender.test' },
    to: [{ name: null, address: to }],
    cc: [],
    bcc: [],
    replyTo: [],
    envelopeTo: [to],
    subject: 'Pools',
    html: null,
    text: 'Hello.',
    headers: {},
    attachments: [],
    ...(ipPool ? { ipPool } : {}),
  };
}

/** Sends one message at a time (so the order is the test's) and returns each recipient's verdict. */
async function sendEach(direct: DirectProvider, messages: OutboundMessage[]) {
  const results: SendResult['recipients'][number][] = [];
  for (const m of messages) results.push(...(await direct.send(m, AbortSignal.timeout(10_000))).recipients);
  return results;
}

const fromOf = (to: string) => mx.received.find((r) => r.to.includes(to));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'source-pools-'));
  const file = join(dir, 'profiles.json');
  // Two warm-up days: 2 messages a profile, then 3; graduated from day 3.
  writeFileSync(file, JSON.stringify({ warmup: { schedules: { default: [2, 3] } }, profiles: {} }));
  profiles = loadShapingProfiles(file);
  database = await createTestDatabase(inject('templateDatabase'));
  const config = loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url });
  orms = [await initOrm(config), await initOrm(config)];
  dns = await startDnsServer();
  resolver = new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 1_000 });
  dns.set('MX', 'pools.test', ['10 mx.pools.test']);
  dns.set('A', 'mx.pools.test', ['127.0.0.2']);
  dns.set('AAAA', 'mx.pools.test', []);
  mx = await startMx();
  relaySink = await startSmtpSink();
});

afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await Promise.all(orms.map((orm) => orm.close()));
  await database.drop();
  await Promise.all([mx.close(), relaySink.close(), dns.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('source IP pools', () => {
  it("sends a pinned team's mail from its pool's IPs with their EHLO names, and the others' from the default pool", async () => {
    const direct = provider({
      source_ips: ['127.0.0.21', { ip: '127.0.0.22', ehlo_name: 'vip.postlane.test' }, '127.0.0.23'],
      pools: { vip: ['127.0.0.22'] },
    });
    expect(direct.usesIpPools).toBe(true);
    const results = await sendEach(direct, [
      message('a1@pools.test', 'vip'),
      message('a2@pools.test', 'vip'),
      message('b1@pools.test'),
      message('b2@pools.test'),
      // A pool this provider does not have (another region's): the default pool.
      message('c1@pools.test', 'elsewhere'),
    ]);

    expect(results.every((r) => r.accepted)).toBe(true);
    expect([fromOf('a1@pools.test'), fromOf('a2@pools.test')]).toEqual([
      expect.objectContaining({ from: '127.0.0.22', ehlo: 'vip.postlane.test' }),
      expect.objectContaining({ from: '127.0.0.22', ehlo: 'vip.postlane.test' }),
    ]);
    for (const to of ['b1@pools.test', 'b2@pools.test', 'c1@pools.test'])
      expect(fromOf(to)).toMatchObject({
        from: expect.stringMatching(/^127\.0\.0\.2[13]$/),
        ehlo: 'out.postlane.test',
      });
    // The default pool's IPs take turns.
    expect(new Set(['b1@pools.test', 'b2@pools.test'].map((to) => fromOf(to)!.from)).size).toBe(2);
  });

  it('names each source IP with its EHLO name, its pool and its warm-up start', () => {
    expect(
      sourceIdentities({
        ehlo_name: 'out.postlane.test',
        source_ips: ['192.0.2.1', { ip: '192.0.2.2', ehlo_name: 'b.postlane.test', warmup_from: '2027-01-11' }],
        pools: { vip: ['192.0.2.2'] },
      }),
    ).toEqual([
      { ip: '192.0.2.1', ehloName: 'out.postlane.test', pool: 'default' },
      {
        ip: '192.0.2.2',
        ehloName: 'b.postlane.test',
        pool: 'vip',
        warmupFrom: new Date('2027-01-11T00:00:00Z'),
      },
    ]);
  });
});

describe('IP warm-up', () => {
  it("holds a warming IP to its day's cap across two hosts racing for it, and gives back what did not go", async () => {
    now = new Date('2027-01-11T10:00:00.000Z');
    const [identity] = sourceIdentities({
      ehlo_name: 'out.postlane.test',
      source_ips: [{ ip: '127.0.0.31', warmup_from: WARMUP_FROM }],
    });
    const hosts = orms.map((orm) => new PgWarmup({ orm, clock: () => now, profiles }));
    const tickets = await Promise.all(
      hosts.flatMap((host) => Array.from({ length: 8 }, () => host.take(identity!, 'gmail', 1))),
    );
    const granted = tickets.filter((ticket): ticket is WarmupTicket => ticket !== null);
    expect(granted).toHaveLength(2);
    expect(await hosts[1]!.take(identity!, 'gmail', 1)).toBeNull();
    // The count is per profile: the default profile's day is untouched.
    expect(await hosts[0]!.take(identity!, 'default', 2)).not.toBeNull();

    await granted[0]!.giveBack();
    expect(await hosts[1]!.take(identity!, 'gmail', 1)).not.toBeNull();
    const [row] = await queryDatabase<{ sent: number; day: string }>(
      database.url,
      `SELECT sent, to_char(day, 'YYYY-MM-DD') AS day FROM warmup_count WHERE source_ip = '127.0.0.31' AND profile = 'gmail'`,
    );
    expect(row).toEqual({ sent: 2, day: '2027-01-11' });
  });

  it("moves a warming IP's excess to the pool's other IPs, defers when none has room, and graduates when the schedule ends", async () => {
    now = new Date('2027-01-11T10:00:00.000Z');
    const config = {
      source_ips: [
        { ip: '127.0.0.41', warmup_from: WARMUP_FROM },
        { ip: '127.0.0.42', warmup_from: WARMUP_FROM },
      ],
    };
    // Two hosts, each its own provider, sharing the counts in PostgreSQL.
    const hosts = [provider(config, 0), provider(config, 1)];
    const day = async (label: string, count: number) => {
      const results = [];
      for (let i = 0; i < count; i += 1)
        results.push(...(await sendEach(hosts[i % 2]!, [message(`${label}-${i}@pools.test`)])));
      return results;
    };
    const sentFrom = (label: string) => mx.received.filter((r) => r.to[0]!.startsWith(`${label}-`)).map((r) => r.from);

    // Day 1: 2 a day each, so 4 go (2 from each IP) and the fifth waits.
    const first = await day('d1', 5);
    expect(first.slice(0, 4).every((r) => r.accepted)).toBe(true);
    expect(first[4]).toMatchObject({
      accepted: false,
      transient: true,
      class: 'rate_limited',
      response: expect.stringMatching(/^deferred by IP warm-up: every source IP of the pool has sent today's cap/),
    });
    expect(sentFrom('d1').sort()).toEqual(['127.0.0.41', '127.0.0.41', '127.0.0.42', '127.0.0.42']);

    // Day 2, by the clock: 3 each.
    now = new Date(now.getTime() + DAY_MS);
    const second = await day('d2', 7);
    expect(second.filter((r) => r.accepted)).toHaveLength(6);
    expect(second[6]).toMatchObject({ accepted: false, transient: true, class: 'rate_limited' });

    // Day 3: past the schedule, graduated: no cap any more, and no count kept.
    now = new Date(now.getTime() + DAY_MS);
    const third = await day('d3', 12);
    expect(third.every((r) => r.accepted)).toBe(true);
    const counted = await queryDatabase(
      database.url,
      `SELECT * FROM warmup_count WHERE source_ip IN ('127.0.0.41', '127.0.0.42') AND day = '2027-01-13'`,
    );
    expect(counted).toEqual([]);
  });

  it('hands what no IP of the pool has room for to the warmup_fallback relay', async () => {
    now = new Date('2027-01-11T10:00:00.000Z');
    const direct = provider({
      source_ips: [{ ip: '127.0.0.51', warmup_from: WARMUP_FROM }],
      warmup_fallback: 'relay',
    });
    const results = await sendEach(
      direct,
      ['e1', 'e2', 'e3'].map((name) => message(`${name}@pools.test`)),
    );

    expect(results.every((r) => r.accepted)).toBe(true);
    // The relay's acceptance is a send, not a delivery: it is marked so.
    expect(results.map((r) => r.relayed ?? false)).toEqual([false, false, true]);
    expect(['e1@pools.test', 'e2@pools.test'].map((to) => fromOf(to)?.from)).toEqual(['127.0.0.51', '127.0.0.51']);
    expect(fromOf('e3@pools.test')).toBeUndefined();
    expect((await relaySink.waitFor(1)).map((mail) => mail.envelope.to)).toEqual([['e3@pools.test']]);
  });

  it('ships a schedule of 50 messages a profile on day 1 that graduates after day 30', () => {
    const shipped = loadShapingProfiles();
    expect(shipped.warmupCap('gmail', 1)).toBe(50);
    expect(shipped.warmupCap('default', 2)).toBe(100);
    expect(shipped.warmupCap('microsoft', 30)).toBeGreaterThan(shipped.warmupCap('microsoft', 29)!);
    expect(shipped.warmupCap('yahoo', 31)).toBeNull();
  });
});
