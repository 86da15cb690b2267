import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../../../config/index.js';
import { initOrm } from '../../../../server/db/orm.js';
import { createBounceClassifier, type SmtpReply } from '../../../../server/mail/bounce-classifier.js';
import {
  BACKOFF_CAP_MS,
  CONNECTION_RECHECK_MS,
  LEASE_MS,
  PgShaper,
} from '../../../../server/providers/direct/pg-shaper.js';
import type { ConnectionLease, NotNow, ShapedReply, ShapingKey } from '../../../../server/providers/direct/shaper.js';
import { loadShapingProfiles, type ShapingProfileInput } from '../../../../server/providers/direct/shaping-profiles.js';
import { createTestDatabase, queryDatabase } from '../../../support/db.js';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** Two ORMs on one database: two worker hosts, each with a connection pool of its own. */
let orms: MikroORM[];
let dir: string;
/** The hosts' clock: one, so a test sets the time rather than waits for it. */
let now = new Date('2027-01-10T12:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms);
const classifyReply = createBounceClassifier();

/** Limits small enough to reach in a test; each test uses a group of its own. */
const unlimited = { messagesPerSecond: null, messagesPerHour: null, connectionsPerMinute: null };
const testProfiles: Record<string, ShapingProfileInput> = {
  three: { mxSuffixes: ['three.test'], connections: 3, messagesPerConnection: 7, ...unlimited, source: 'test' },
  one: { mxSuffixes: ['one.test'], connections: 1, messagesPerConnection: 100, ...unlimited, source: 'test' },
  rated: {
    mxSuffixes: ['rated.test'],
    connections: 10,
    messagesPerConnection: 100,
    ...unlimited,
    messagesPerSecond: 2,
    messagesPerHour: 3,
    connectionsPerMinute: 2,
    source: 'test',
  },
  batched: {
    mxSuffixes: ['batched.test'],
    connections: 10,
    messagesPerConnection: 100,
    ...unlimited,
    messagesPerSecond: 20,
    source: 'test',
  },
  short: {
    mxSuffixes: ['short.test'],
    connections: 10,
    messagesPerConnection: 4,
    ...unlimited,
    messagesPerSecond: 20,
    source: 'test',
  },
};
let shapers: PgShaper[];

const key = (group: string, profile: string): ShapingKey => ({ sourceIp: '192.0.2.10', group, profile });
const isNotNow = (answer: unknown): answer is NotNow =>
  typeof answer === 'object' && answer !== null && 'retryAt' in answer;
const replyOf = (reply: SmtpReply & { code: number }): ShapedReply => ({
  kind: 'reply',
  code: reply.code,
  ...classifyReply(reply),
});
const stateOf = async (group: string) =>
  (
    await queryDatabase<{
      suspended_until: Date | null;
      backoff_level: number;
      deferrals: number;
      connection_failures: number;
      suspensions: number;
      last_deferral: string | null;
    }>(database.url, 'SELECT * FROM shaping_state WHERE mx_group = $1', [group])
  )[0]!;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pg-shaper-'));
  const file = join(dir, 'profiles.json');
  writeFileSync(file, JSON.stringify({ profiles: testProfiles }));
  const profiles = loadShapingProfiles(file);
  database = await createTestDatabase(inject('templateDatabase'));
  const config = loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url });
  orms = [await initOrm(config), await initOrm(config)];
  shapers = orms.map((orm) => new PgShaper({ orm, clock: () => now, profiles }));
});
afterAll(async () => {
  await Promise.all(orms.map((orm) => orm.close()));
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('connection leases across hosts', () => {
  it('never lets two hosts racing for connections hold more than the limit', async () => {
    const group = key('mx.three.test', 'three');
    let open = 0;
    let most = 0;
    let granted = 0;
    // Eight connection attempts at once on each host, each holding its slot across a round trip.
    const worker = async (shaper: PgShaper) => {
      for (let round = 0; round < 15; round += 1) {
        const lease = await shaper.openConnection(group);
        if (isNotNow(lease)) continue;
        granted += 1;
        open += 1;
        most = Math.max(most, open);
        expect(lease.messagesLeft).toBe(7);
        await shaper.sendMessage(group);
        open -= 1;
        await lease.release();
      }
    };
    await Promise.all(shapers.flatMap((shaper) => Array.from({ length: 8 }, () => worker(shaper))));
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBe(3);
    expect(granted).toBeGreaterThan(3);
    const [row] = await queryDatabase<{ leases: object }>(
      database.url,
      `SELECT leases FROM shaping_state WHERE mx_group = 'mx.three.test'`,
    );
    expect(row!.leases).toEqual({});
  });

  it('refuses a connection past the limit until one is released, asking again shortly', async () => {
    const group = key('mx2.three.test', 'three');
    const leases = (await Promise.all(
      [0, 1, 2].map((i) => shapers[i % 2]!.openConnection(group)),
    )) as ConnectionLease[];
    expect(leases.some(isNotNow)).toBe(false);
    const refused = await shapers[1]!.openConnection(group);
    expect(refused).toEqual({ retryAt: at(CONNECTION_RECHECK_MS), reason: '3 connections open, the limit is 3' });
    await leases[0]!.release();
    await leases[0]!.release(); // twice is once
    expect(isNotNow(await shapers[1]!.openConnection(group))).toBe(false);
    expect(isNotNow(await shapers[1]!.openConnection(group))).toBe(true);
  });

  it('gives a host that was refused its share: the host that frees a slot cannot take it back while the other waits', async () => {
    const group = key('mx3.three.test', 'three');
    const held = (await Promise.all([0, 1, 2].map(() => shapers[0]!.openConnection(group)))) as ConnectionLease[];
    expect(held.some(isNotNow)).toBe(false);
    expect(isNotNow(await shapers[1]!.openConnection(group))).toBe(true);
    await held[0]!.release();
    // Two of three slots are the first host's share while the second waits.
    expect(await shapers[0]!.openConnection(group)).toEqual({
      retryAt: at(CONNECTION_RECHECK_MS),
      reason: '2 connections open on this host, its share while 1 more hosts wait',
    });
    const second = await shapers[1]!.openConnection(group);
    expect(isNotNow(second)).toBe(false);
    // Once nobody has been refused for a while, a host may hold every slot again.
    await (second as ConnectionLease).release();
    now = at(2 * CONNECTION_RECHECK_MS);
    expect(isNotNow(await shapers[0]!.openConnection(group))).toBe(false);
    await Promise.all(held.map((lease) => lease.release()));
  });

  it('keeps the lease of a connection open without a message while its host renews it, and lets it lapse once it stops', async () => {
    const start = now;
    const quiet = key('mx3.one.test', 'one');
    expect(isNotNow(await shapers[0]!.openConnection(quiet))).toBe(false);
    // A message in DATA for longer than a lease: the host renews, nothing is granted meanwhile.
    now = new Date(start.getTime() + LEASE_MS - 1);
    await shapers[0]!.renewLeases();
    now = new Date(start.getTime() + LEASE_MS + 1);
    expect(isNotNow(await shapers[1]!.openConnection(quiet))).toBe(true);
    // The host died after that renewal: a lease later, the slot is the other host's.
    now = new Date(start.getTime() + 2 * LEASE_MS - 1);
    expect(isNotNow(await shapers[1]!.openConnection(quiet))).toBe(false);
  });

  it("lets a dead host's leases lapse, while a host sending on its connection keeps them", async () => {
    const start = now;
    const dead = key('mx.one.test', 'one');
    const busy = key('mx2.one.test', 'one');
    expect(isNotNow(await shapers[0]!.openConnection(dead))).toBe(false);
    expect(isNotNow(await shapers[0]!.openConnection(busy))).toBe(false);
    // The first host dies holding the first lease; on the second group it keeps sending.
    now = new Date(start.getTime() + LEASE_MS / 2);
    expect(await shapers[0]!.sendMessage(busy)).toBe(true);
    now = new Date(start.getTime() + LEASE_MS - 1);
    expect(isNotNow(await shapers[1]!.openConnection(dead))).toBe(true);
    now = new Date(start.getTime() + LEASE_MS);
    expect(isNotNow(await shapers[1]!.openConnection(dead))).toBe(false);
    expect(isNotNow(await shapers[1]!.openConnection(busy))).toBe(true);
    now = new Date(start.getTime() + LEASE_MS / 2 + LEASE_MS);
    expect(isNotNow(await shapers[1]!.openConnection(busy))).toBe(false);
  });
});

describe('rate buckets', () => {
  it('lets a second of messages through at once, shared by both hosts, then answers when the next may go', async () => {
    const group = key('mx1.rated.test', 'rated');
    expect(await shapers[0]!.sendMessage(group)).toBe(true);
    expect(await shapers[1]!.sendMessage(group)).toBe(true);
    // Two a second: the next comes back half a second on.
    expect(await shapers[0]!.sendMessage(group)).toEqual({
      retryAt: at(500),
      reason: 'messages limited to 2 a second',
    });
    const start = now;
    now = new Date(start.getTime() + 499);
    expect(isNotNow(await shapers[1]!.sendMessage(group))).toBe(true);
    now = new Date(start.getTime() + 500);
    expect(await shapers[1]!.sendMessage(group)).toBe(true);
  });

  it('holds the hourly limit once the per-second one has room again', async () => {
    const group = key('mx2.rated.test', 'rated');
    const start = now;
    for (let i = 0; i < 3; i += 1) {
      now = new Date(start.getTime() + i * 1000);
      expect(await shapers[i % 2]!.sendMessage(group)).toBe(true);
    }
    now = new Date(start.getTime() + 5000);
    // Three an hour: one comes back every 20 minutes after the first.
    expect(await shapers[0]!.sendMessage(group)).toEqual({
      retryAt: new Date(start.getTime() + 20 * 60_000),
      reason: 'messages limited to 3 an hour',
    });
    now = new Date(start.getTime() + 20 * 60_000);
    expect(await shapers[1]!.sendMessage(group)).toBe(true);
  });

  it('limits new connections a minute, however few are open', async () => {
    const group = key('mx3.rated.test', 'rated');
    const first = await shapers[0]!.openConnection(group);
    const second = await shapers[1]!.openConnection(group);
    expect([first, second].some(isNotNow)).toBe(false);
    await (first as ConnectionLease).release();
    expect(await shapers[0]!.openConnection(group)).toEqual({
      retryAt: at(30_000),
      reason: 'new connections limited to 2 a minute',
    });
    now = at(30_000);
    expect(isNotNow(await shapers[0]!.openConnection(group))).toBe(false);
  });
});

describe('messages granted to a connection a few at a time', () => {
  const messageDue = async (group: string) =>
    (
      await queryDatabase<{ message_due: Date }>(
        database.url,
        'SELECT message_due FROM shaping_state WHERE mx_group = $1',
        [group],
      )
    )[0]!.message_due;

  it('never lets connections of two hosts racing for messages send more than the rate allows', async () => {
    const group = key('mx.batched.test', 'batched');
    let sent = 0;
    // Four connections on each host, each sending until refused: twenty a second between them all.
    const connection = async (shaper: PgShaper) => {
      const lease = (await shaper.openConnection(group)) as ConnectionLease;
      while ((await shaper.sendMessage(group, lease)) === true) sent += 1;
      await lease.release();
    };
    await Promise.all(shapers.flatMap((shaper) => [0, 1, 2, 3].map(() => connection(shaper))));
    expect(sent).toBe(20);
    expect(await shapers[1]!.sendMessage(group)).toMatchObject({ reason: 'messages limited to 20 a second' });
  });

  it('takes ten at once for a connection, and gives back those it did not send', async () => {
    const group = key('mx2.batched.test', 'batched');
    const lease = (await shapers[0]!.openConnection(group)) as ConnectionLease;
    expect(await shapers[0]!.sendMessage(group, lease)).toBe(true);
    expect(await shapers[0]!.sendMessage(group, lease)).toBe(true);
    // Ten granted in one statement: the bucket is ten twentieths of a second on.
    expect(await messageDue(group.group)).toEqual(at(500));
    await lease.release();
    expect(await messageDue(group.group)).toEqual(at(100));
    let sent = 0;
    while ((await shapers[1]!.sendMessage(group)) === true) sent += 1;
    expect(sent).toBe(18);
  });

  it('never grants a connection more than it may carry', async () => {
    const group = key('mx.short.test', 'short');
    const lease = (await shapers[0]!.openConnection(group)) as ConnectionLease;
    expect(await shapers[0]!.sendMessage(group, lease)).toBe(true);
    // Four a connection: four granted, not ten.
    expect(await messageDue(group.group)).toEqual(at(200));
    for (let i = 0; i < 3; i += 1) expect(await shapers[0]!.sendMessage(group, lease)).toBe(true);
    expect(await messageDue(group.group)).toEqual(at(200));
    // All sent: nothing to give back.
    await lease.release();
    expect(await messageDue(group.group)).toEqual(at(200));
  });

  it("stops a connection's granted messages when its host is told to slow down", async () => {
    const group = key('mx3.batched.test', 'batched');
    const lease = (await shapers[0]!.openConnection(group)) as ConnectionLease;
    expect(await shapers[0]!.sendMessage(group, lease)).toBe(true);
    await shapers[0]!.recordReply(
      group,
      replyOf({ code: 421, text: '421 4.7.28 Our system has detected an unusual rate of unsolicited mail.' }),
    );
    expect(await shapers[0]!.sendMessage(group, lease)).toMatchObject({ retryAt: at(60_000) });
    await lease.release();
  });
});

describe('back-off', () => {
  const gmailThrottle = replyOf({
    code: 421,
    text: '421-4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.',
  });

  it('does not back a group off for greylisting: the retry is all the server asks', async () => {
    const group = key('mx.greylisting.test', 'default');
    const greylisted = replyOf({ code: 451, text: '451 4.7.1 Greylisted, please try again in 5 minutes' });
    expect(greylisted).toMatchObject({ class: 'policy_block', permanent: false, backoff: false });
    expect(await shapers[0]!.sendMessage(group)).toBe(true);
    await shapers[0]!.recordReply(group, greylisted);
    expect(await shapers[1]!.sendMessage(group)).toBe(true);
    expect(await stateOf(group.group)).toMatchObject({ suspended_until: null, backoff_level: 0, deferrals: 0 });
  });

  it('suspends a group on 421 4.7.28 for a growing interval, and resumes by itself', async () => {
    const group = key('mx.backoff.test', 'default');
    expect(gmailThrottle).toMatchObject({ permanent: false });
    expect(await shapers[0]!.sendMessage(group)).toBe(true);
    await shapers[0]!.recordReply(group, gmailThrottle);
    const suspendedAt = now;
    const expected = {
      retryAt: at(60_000),
      reason: expect.stringMatching(/^suspended until .* after 421 /),
      suspended: true,
    };
    expect(await shapers[1]!.sendMessage(group)).toEqual(expected);
    expect(await shapers[1]!.openConnection(group)).toEqual(expected);
    // Connections under way when it came report it too: the suspension is not lengthened by them.
    await shapers[1]!.recordReply(group, gmailThrottle);
    expect(await stateOf(group.group)).toMatchObject({
      suspended_until: at(60_000),
      backoff_level: 1,
      deferrals: 2,
      suspensions: 1,
      last_deferral: `421 ${gmailThrottle.kind === 'reply' && gmailThrottle.class} (temporary)`,
    });

    now = new Date(suspendedAt.getTime() + 60_000);
    expect(await shapers[1]!.sendMessage(group)).toBe(true);
    // Throttled again soon after resuming: twice as long.
    await shapers[1]!.recordReply(group, gmailThrottle);
    expect(await shapers[0]!.sendMessage(group)).toMatchObject({ retryAt: at(120_000) });
    // And so on up to the cap.
    for (let i = 0; i < 10; i += 1) {
      now = (await stateOf(group.group)).suspended_until!;
      await shapers[i % 2]!.recordReply(group, gmailThrottle);
    }
    expect(await shapers[0]!.sendMessage(group)).toMatchObject({ retryAt: at(BACKOFF_CAP_MS) });
  });

  it('lowers the back-off gradually as mail is delivered after the suspension', async () => {
    const group = key('mx2.backoff.test', 'default');
    const delivered: ShapedReply = { kind: 'reply', code: 250, class: 'unknown', permanent: false, backoff: false };
    // As the provider does: a message let through, then its reply.
    const deliver = async (shaper: PgShaper) => {
      expect(await shaper.sendMessage(group)).toBe(true);
      await shaper.recordReply(group, delivered);
    };
    await shapers[0]!.recordReply(group, gmailThrottle);
    now = at(60_000);
    await shapers[0]!.recordReply(group, gmailThrottle); // level 2: two minutes
    const raised = now;
    now = new Date(raised.getTime() + 120_000);
    await deliver(shapers[0]!);
    expect((await stateOf(group.group)).backoff_level).toBe(2);
    // A level is forgiven once it has stood twice its suspension, then the next after twice its own.
    now = new Date(raised.getTime() + 240_000);
    await deliver(shapers[1]!);
    await deliver(shapers[1]!);
    expect((await stateOf(group.group)).backoff_level).toBe(1);
    now = new Date(raised.getTime() + 240_000 + 120_000);
    await deliver(shapers[0]!);
    expect((await stateOf(group.group)).backoff_level).toBe(0);
    // Back at the first level: a new throttle suspends for a minute again.
    await shapers[0]!.recordReply(group, gmailThrottle);
    expect(await shapers[0]!.sendMessage(group)).toMatchObject({ retryAt: at(60_000) });
  });

  it.each([
    [
      'Yahoo',
      {
        code: 421,
        text: '421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
      },
    ],
    [
      'Microsoft',
      {
        code: 451,
        text: '451 4.7.650 The mail server [192.0.2.10] has been temporarily rate limited due to IP reputation.',
      },
    ],
    ['a generic 421', { code: 421, text: '421 Service not available, closing transmission channel' }],
    [
      'a permanent blocklist refusal',
      { code: 554, text: '554 5.7.1 Service unavailable; Client host [192.0.2.10] blocked using zen.spamhaus.org' },
    ],
  ])('suspends on %s throttling', async (name, reply) => {
    const group = key(`mx.${name.replace(/\W/g, '')}.throttle.test`, 'default');
    await shapers[0]!.recordReply(group, replyOf(reply));
    expect(await shapers[1]!.sendMessage(group)).toMatchObject({ retryAt: at(60_000) });
  });

  it('leaves the group alone on a reply about one recipient or message', async () => {
    const group = key('mx.recipient.test', 'default');
    expect(await shapers[0]!.sendMessage(group)).toBe(true);
    await shapers[0]!.recordReply(
      group,
      replyOf({ code: 550, text: '550 5.1.1 The email account that you tried to reach does not exist.' }),
    );
    await shapers[0]!.recordReply(
      group,
      replyOf({ code: 452, text: '452 4.2.2 The email account that you tried to reach is over quota.' }),
    );
    expect(await shapers[0]!.sendMessage(group)).toBe(true);
  });

  it('suspends on a burst of connection failures, not on failures spread out', async () => {
    const spread = key('mx.spread.test', 'default');
    const burst = key('mx.burst.test', 'default');
    const failed: ShapedReply = { kind: 'connection_failed', reason: 'connect ECONNREFUSED 192.0.2.25:25' };
    const start = now;
    for (let i = 0; i < 6; i += 1) {
      now = new Date(start.getTime() + i * 31_000);
      await shapers[i % 2]!.recordReply(spread, failed);
      expect(isNotNow(await shapers[0]!.openConnection(spread))).toBe(false);
    }
    now = start;
    await shapers[0]!.recordReply(burst, failed);
    now = at(20_000);
    await shapers[1]!.recordReply(burst, failed);
    expect(isNotNow(await shapers[0]!.openConnection(burst))).toBe(false);
    now = at(39_000);
    await shapers[0]!.recordReply(burst, failed);
    expect(await shapers[1]!.openConnection(burst)).toEqual({
      retryAt: at(60_000),
      reason: `suspended until ${at(60_000).toISOString()} after connection failed: connect ECONNREFUSED 192.0.2.25:25`,
      suspended: true,
    });
    expect(await stateOf(burst.group)).toMatchObject({ connection_failures: 3, suspensions: 1, deferrals: 0 });
  });
});
