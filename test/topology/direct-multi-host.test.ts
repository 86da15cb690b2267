import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PERMITS_PER_GRANT } from '../../server/providers/direct/pg-shaper.js';
import { type ChaosStack, startStack } from '../support/chaos.js';
import { startDnsServer } from '../support/dns-server.js';
import { until } from '../support/until.js';
import { type MxSinks, mostInOneSecond, mostOpen, startMxSinks } from './mx-sinks.js';
import { createNetwork, type Network } from './netns.js';

/**
 * Direct delivery's traffic shaping holds for the cluster, not for each process: two worker hosts
 * (compiled `postlane serve --role worker`, each in a network namespace of its own) deliver one
 * domain's mail to its MX host, itself a host of the test network, and the sink there counts what
 * arrives. Neither worker binds a source address, so both send as the one source the limits are
 * kept for, as hosts behind one NAT address would. `npm test` builds first; it runs as root.
 */
const DOMAIN = 'shaped.test';
const MX = `mx.${DOMAIN}`;
const LIMITS = { connections: 3, messagesPerConnection: 10, messagesPerSecond: 50 };
const EMAILS = 500;

let net: Network;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let sinks: MxSinks;
let stack: ChaosStack;

beforeAll(async () => {
  net = await createNetwork([{ name: 'db' }, { name: 'worker1' }, { name: 'worker2' }, { name: 'mx' }]);
  try {
    const mx = net.hosts.mx!.back;
    dns = await startDnsServer({ host: net.root.back });
    dns.set('MX', DOMAIN, [`10 ${MX}`]);
    dns.set('A', MX, [mx]);
    sinks = await startMxSinks(net.hosts.mx!.netns, { mx: [{ address: mx }] });

    const shapingFile = join(mkdtempSync(join(tmpdir(), 'postlane-shaping-')), 'shaping.json');
    writeFileSync(
      shapingFile,
      JSON.stringify({
        profiles: {
          shaped: {
            mxSuffixes: [DOMAIN],
            ...LIMITS,
            messagesPerHour: null,
            connectionsPerMinute: 600,
            source: 'this test',
          },
        },
      }),
    );
    stack = await startStack(
      {
        POSTLANE_PROVIDERS: JSON.stringify([{ type: 'direct', regions: ['us-east-1'], ehlo_name: 'mta.chaos.test' }]),
        POSTLANE_DNS_SERVERS: dns.address,
        POSTLANE_SHAPING_FILE: shapingFile,
        // Small claims, as in the multi-host test: one worker cannot take the whole queue at once.
        POSTLANE_SEND_BATCH_SIZE: '20',
        // The multi-host test's leases: a batch that waits its turn for the group, on a machine the
        // whole suite loads, still ends well within its claim (the chaos stack's 5 s are for kills).
        POSTLANE_SEND_LEASE_SECONDS: '20',
        POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '24',
      },
      { database: { netns: net.hosts.db!.netns, host: net.hosts.db!.back }, sinkHost: net.root.back },
    );
    await stack.startApi();
  } catch (err) {
    sinks?.close();
    await net.remove();
    throw err;
  }
}, 120_000);

afterAll(async () => {
  await stack?.close();
  sinks?.close();
  await dns?.close();
  await net?.remove();
});

it('two worker hosts together never pass a group’s connections, messages per connection or message rate, and nothing is lost', async () => {
  const emails = Array.from({ length: EMAILS }, (_, i) => ({
    from: 'News <news@chaos.test>',
    to: [`reader${i}@${DOMAIN}`],
    subject: `Shaped ${i}`,
    text: 'Hello',
  }));
  const ids: string[] = [];
  // Both workers are up before anything is queued, so both find work at once: one started first
  // would have the group to itself until the other had started, on a loaded machine seconds later.
  await Promise.all([stack.startWorker(net.hosts.worker1), stack.startWorker(net.hosts.worker2)]);
  for (let at = 0; at < EMAILS; at += 100) {
    const res = await fetch(`${stack.apiUrl}/emails/batch`, {
      method: 'POST',
      headers: stack.headers,
      body: JSON.stringify(emails.slice(at, at + 100)),
    });
    expect(res.status).toBe(200);
    ids.push(...((await res.json()) as { data: { id: string }[] }).data.map((e) => e.id));
  }

  const accepted = () => sinks.events.flatMap((e) => (e.kind === 'message' && e.verdict === 'accepted' ? [e] : []));
  await until(
    async () => accepted().length >= EMAILS,
    120_000,
    () => `${accepted().length} of ${EMAILS} delivered within 120 s`,
  );
  const carried = new Map<string, number>();
  const copies = new Map<string, number>();
  for (const e of accepted()) {
    carried.set(e.connection, (carried.get(e.connection) ?? 0) + 1);
    copies.set(e.messageId, (copies.get(e.messageId) ?? 0) + 1);
  }
  const clients = new Set(accepted().map((e) => e.client.replace(/^::ffff:/, '')));
  const figures = {
    open: mostOpen(sinks.events),
    onOneConnection: Math.max(...carried.values()),
    inOneSecond: mostInOneSecond(sinks.events),
  };
  console.log(
    `direct multi-host: ${EMAILS} delivered in ${accepted().at(-1)!.at - accepted()[0]!.at} ms over ${carried.size} connections from ${[...clients].join(', ')}; at most ${figures.open} at once, ${figures.onOneConnection} on one, ${figures.inOneSecond} in one second`,
  );

  expect(figures.open).toBeLessThanOrEqual(LIMITS.connections);
  expect(figures.onOneConnection).toBeLessThanOrEqual(LIMITS.messagesPerConnection);
  // GCRA lets a second's worth through at once, then one per step: no second of grants holds more
  // than two. A connection's grant of up to ten is sent in the moments after it, so a second at
  // the receiver may hold one grant more.
  expect(figures.inOneSecond).toBeLessThanOrEqual(2 * LIMITS.messagesPerSecond + PERMITS_PER_GRANT);
  // Both hosts carried mail: the limits above were held between them, not by one alone.
  expect(clients).toEqual(new Set([net.hosts.worker1!.back, net.hosts.worker2!.back]));
  // Nothing lost. A copy only where a batch outlived its claim on a loaded machine and the other
  // host took the email over: the documented window, at most 5 a connection.
  expect(copies.size).toBe(EMAILS);
  expect(accepted().length - EMAILS).toBeLessThanOrEqual(5 * LIMITS.connections);
  // The outcome is written just after the sink's answer.
  const outcomes = () =>
    stack.query<{ status: string; attempts: number; n: number }>(
      `SELECT status, attempts, count(*)::int AS n FROM email WHERE id = ANY($1) GROUP BY 1, 2`,
      [ids],
    );
  await until(
    async () => (await outcomes()).every((row) => row.status === 'sent'),
    30_000,
    async () => `not all sent: ${JSON.stringify(await outcomes())}`,
  );
  // Waiting for the shaper is not a deferral: no attempt was spent on it.
  expect(await outcomes()).toEqual([{ status: 'sent', attempts: 1, n: EMAILS }]);
}, 240_000);
