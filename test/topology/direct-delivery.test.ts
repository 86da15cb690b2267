import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueueRow } from '../../server/services/queue/list-queue.js';
import { selfSignedCertificate, testCertificateAuthority } from '../support/certificate.js';
import { type ChaosStack, startStack } from '../support/chaos.js';
import { UNRECORDED_PER_CONNECTION } from '../../server/providers/smtp.provider.js';
import { startDnsServer } from '../support/dns-server.js';
import { type PostlaneProcess, spawnPostlane } from '../support/postlane-process.js';
import { until } from '../support/until.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import type { MxSpec, PolicySpec, SinkEvent } from './mx-sink-process.js';
import { type MxSinks, mostInOneSecond, mostOpen, startMxSinks } from './mx-sinks.js';
import { createRemoteHost, type RemoteHost } from './netns.js';

/**
 * Direct delivery through the whole appliance (compiled `postlane serve`, an API and two workers):
 * the recipients' mail servers are SMTP servers on port 25 of addresses in a network namespace of
 * the test's own (mx-sink-process.ts), found through a DNS server of its own, each behaving as a
 * kind of real one does: a Gmail-like group (its host under google.com, so the `gmail` shaping
 * profile) throttling with `421 4.7.28`, a Microsoft-like one refusing a burst with `451 4.7.650`,
 * greylisting, unknown users, a blocklist, STARTTLS required, certificates an MTA-STS `enforce`
 * policy (served over HTTPS with a certificate of the test's own authority) refuses, and a group
 * with tight limits from a shaping file. Email goes in through the official SDK, webhooks are
 * verified with `standardwebhooks`, the rest is read from the database and `postlane queue`.
 *
 * Retries come on the outbox's schedule (the first 30 s after the first attempt), so the cases
 * run side by side and the file waits for that first retry once. `npm test` builds first; it runs as root.
 */
/** The first suspension: long enough for `postlane queue` to start on a loaded machine, shorter than the first retry delay (30 s). */
const BACKOFF_SECONDS = 25;
/** The limits of the `limited` profile, from the shaping file the workers are given. */
const LIMITED = { connections: 2, messagesPerConnection: 3, messagesPerSecond: 5 };
/** The profiles' connection limits, by the group's MX host: what no sink may ever see exceeded. */
/** The `crash` profile's connection limit: above the messages of its case, so connections the killed workers' leases still hold never stop the next one. */
const CRASH_CONNECTIONS = 50;
const CONNECTION_LIMITS = {
  gmail: 5,
  microsoft: 5,
  default: 10,
  limited: LIMITED.connections,
  crash: CRASH_CONNECTIONS,
};

/** Each recipient domain: its MX host, the profile that host's name selects, and how its sink behaves. */
const DOMAINS = {
  gmail: { mx: 'gmail-smtp-in.l.google.com', profile: 'gmail', sink: { throttle: 1 } },
  normal: { mx: 'mx.normal.test', profile: 'default', sink: {} },
  microsoft: { mx: 'ms-test.olc.protection.outlook.com', profile: 'microsoft', sink: { burstMs: 10_000 } },
  grey: { mx: 'mx.grey.test', profile: 'default', sink: { greylist: true } },
  users: { mx: 'mx.users.test', profile: 'default', sink: { unknownUsers: true } },
  blocked: { mx: 'mx.blocked.test', profile: 'default', sink: { blocklisted: true } },
  tls: { mx: 'mx.tls.test', profile: 'default', sink: { requireTls: true } },
  'sts-name': { mx: 'mx.sts-name.test', profile: 'default', sink: {} },
  'sts-ca': { mx: 'mx.sts-ca.test', profile: 'default', sink: {} },
  limited: { mx: 'mx.limited.test', profile: 'limited', sink: {} },
  crash: { mx: 'mx.crash.test', profile: 'crash', sink: { replyDelayMs: 1000 } },
} satisfies Record<string, { mx: string; profile: keyof typeof CONNECTION_LIMITS; sink: Omit<MxSpec, 'address'> }>;
type DomainName = keyof typeof DOMAINS;
const domainOf = (name: DomainName) => `${name}.test`;

let remote: RemoteHost;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let sinks: MxSinks;
let stack: ChaosStack;
let workers: PostlaneProcess[];
let resend: Resend;
let webhook: Webhook;
let workDir: string;
/** Each domain's sink address. */
const addressOf = {} as Record<DomainName, string>;
const hooks = await startWebhookReceiver();
/** What the sinks reported, in order. */
let sinkEvents: SinkEvent[] = [];

beforeAll(async () => {
  const names = Object.keys(DOMAINS) as DomainName[];
  // One address per domain's MX, and one for the MTA-STS policy host.
  remote = await createRemoteHost('mx', names.length + 1);
  workDir = mkdtempSync(join(tmpdir(), 'postlane-direct-'));
  const ca = testCertificateAuthority();
  try {
    names.forEach((name, at) => (addressOf[name] = remote.addresses[at]!));
    const policyAddress = remote.addresses[names.length]!;
    dns = await startDnsServer();
    for (const name of names) {
      dns.set('MX', domainOf(name), [`10 ${DOMAINS[name].mx}`]);
      dns.set('A', DOMAINS[name].mx, [addressOf[name]]);
    }
    // Both MTA-STS domains publish an `enforce` policy naming their MX; their MX hosts present a
    // certificate of the trusted authority for another name, and one for the right name that no
    // trusted authority signed.
    const stsDomains = ['sts-name', 'sts-ca'] as const;
    for (const name of stsDomains) {
      dns.set('TXT', `_mta-sts.${domainOf(name)}`, ['v=STSv1; id=20261127']);
      dns.set('A', `mta-sts.${domainOf(name)}`, [policyAddress]);
    }
    const tls: Partial<Record<DomainName, { key: string; cert: string }>> = {
      tls: selfSignedCertificate(DOMAINS.tls.mx),
      'sts-name': ca.issue(['mx.other.test']),
      'sts-ca': selfSignedCertificate(DOMAINS['sts-ca'].mx),
    };
    const policy: PolicySpec = {
      address: policyAddress,
      ...ca.issue(stsDomains.map((name) => `mta-sts.${domainOf(name)}`)),
      policy: `version: STSv1\nmode: enforce\n${stsDomains.map((name) => `mx: ${DOMAINS[name].mx}\n`).join('')}max_age: 86400\n`,
    };
    const caFile = join(workDir, 'ca.pem');
    writeFileSync(caFile, ca.cert);
    const shapingFile = join(workDir, 'shaping.json');
    writeFileSync(
      shapingFile,
      JSON.stringify({
        profiles: {
          limited: {
            mxSuffixes: ['limited.test'],
            ...LIMITED,
            messagesPerHour: null,
            connectionsPerMinute: 600,
            source: 'the direct delivery test',
          },
          crash: {
            mxSuffixes: ['crash.test'],
            connections: CRASH_CONNECTIONS,
            messagesPerConnection: 100,
            messagesPerSecond: null,
            messagesPerHour: null,
            connectionsPerMinute: null,
            source: 'the direct delivery test',
          },
        },
      }),
    );

    const mx = names.map((name): MxSpec => ({ address: addressOf[name], ...DOMAINS[name].sink, tls: tls[name] }));
    sinks = await startMxSinks(remote.netns, { mx, policies: [policy] });
    sinkEvents = sinks.events;

    stack = await startStack({
      POSTLANE_PROVIDERS: JSON.stringify([
        { type: 'direct', regions: ['us-east-1'], ehlo_name: 'mta.chaos.test', source_ips: [remote.local] },
      ]),
      POSTLANE_DNS_SERVERS: dns.address,
      POSTLANE_SHAPING_BACKOFF_SECONDS: String(BACKOFF_SECONDS),
      POSTLANE_SHAPING_FILE: shapingFile,
      // The policy host is on the test's private network, which MTA-STS fetches may not reach unless allowed.
      POSTLANE_MTA_STS_ALLOWED_CIDRS: `${policyAddress}/32`,
      // The test's authority beside the system's: the policy host's certificate is one of its.
      NODE_EXTRA_CA_CERTS: caFile,
      // Webhooks go to the test process on loopback.
      POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      // The stack's 5 s lease is for crash tests; a machine loaded by the whole suite can take longer
      // over a batch, which would then be claimed again (multi-host.test.ts's figures).
      POSTLANE_SEND_LEASE_SECONDS: '20',
      POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '24',
    });
    await stack.startApi();
    // Two workers: the groups' limits are the cluster's, held by both together.
    workers = await Promise.all([stack.startWorker(), stack.startWorker()]);

    resend = new Resend(stack.headers.authorization.slice('Bearer '.length), { baseUrl: stack.apiUrl });
    const { data: hook, error } = await resend.webhooks.create({
      endpoint: hooks.url,
      events: ['email.delivered', 'email.delivery_delayed', 'email.bounced', 'email.failed'],
    });
    if (error) throw new Error(`the webhook endpoint: ${error.message}`);
    webhook = new Webhook(hook!.signing_secret);
  } catch (err) {
    await remote.remove();
    throw err;
  } finally {
    rmSync(ca.dir, { recursive: true, force: true });
  }
}, 120_000);

afterAll(async () => {
  await stack?.close();
  sinks?.close();
  await dns?.close();
  await hooks.close();
  await remote?.remove();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

interface EmailEvent {
  type: string;
  data: {
    email_id: string;
    bounce?: { class?: string; message: string };
    delay?: { class?: string; message: string };
  };
}

const send = async (to: string) => {
  const { data, error } = await resend.emails.send({ from: 'News <news@chaos.test>', to, subject: to, text: 'Hello' });
  if (error) throw new Error(`${to}: ${error.name} ${error.message}`);
  return data!.id;
};
const messageIdOf = (id: string) => `<${id}@chaos.test>`;
/** The verdicts the sinks gave a message, in order. */
const verdictsOf = (id: string) =>
  sinkEvents.flatMap((e) => (e.kind === 'message' && e.messageId === messageIdOf(id) ? [e.verdict] : []));
/** The verified webhook events of an email, as received. */
const eventsOf = (id: string) =>
  hooks.received
    .map((request) => webhook.verify(request.body, request.headers as Record<string, string>) as EmailEvent)
    .filter((event) => event.data.email_id === id);
const typesOf = (id: string) => eventsOf(id).map((event) => event.type);
const emailRow = async (id: string) =>
  (
    await stack.query<{ status: string; attempts: number; last_error: string | null }>(
      `SELECT status, attempts, last_error FROM email WHERE id = $1`,
      [id],
    )
  )[0]!;
const waitForEvents = (id: string, types: string[], ms: number) =>
  until(
    async () => typesOf(id).length >= types.length,
    ms,
    async () =>
      `${id}: webhooks ${types.join(', ')} did not all arrive within ${ms / 1000} s (got ${typesOf(id).join(', ')}; the email: ${JSON.stringify(await emailRow(id))})`,
  );
/** The state of an MX group's shaping, from every source IP. */
const shapingOf = (domain: DomainName) =>
  stack.query<{ suspended: boolean; seconds: number; last_deferral: string | null; backoff_level: number }>(
    `SELECT suspended_until > now() AS suspended, extract(epoch FROM suspended_until - backoff_changed_at)::float8 AS seconds,
            last_deferral, backoff_level
     FROM shaping_state WHERE mx_group = $1`,
    [DOMAINS[domain].mx],
  );

/** `postlane queue --json`, the CLI as an operator runs it, with the test's configuration. */
async function postlaneQueue(): Promise<QueueRow[]> {
  const cli = spawnPostlane(['queue', '--json'], { DATABASE_URL: stack.cluster.url('postlane') });
  let stdout = '';
  cli.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const { code } = await cli.exited;
  if (code !== 0) throw new Error(`postlane queue --json exited ${code}:\n${cli.output()}`);
  return JSON.parse(stdout) as QueueRow[];
}

// The cases wait for the outbox's first retry side by side.
describe.concurrent('each kind of recipient server', () => {
  it('a Gmail-like group answering 421 4.7.28 is suspended (as `postlane queue` shows) and its mail delivered after the back-off; another domain at once; webhooks tell both', async () => {
    const normal = [await send(`ada@${domainOf('normal')}`), await send(`bob@${domainOf('normal')}`)];
    const throttled = await send(`cyd@${domainOf('gmail')}`);

    // The first attempts: the normal domain's mail delivered, the Gmail-like group's answered 421.
    await until(
      async () => normal.every((id) => verdictsOf(id).length === 1) && verdictsOf(throttled).length === 1,
      60_000,
      'the first attempts did not reach the sinks within 60 s',
    );
    // The worker records the reply just after the sink sends it.
    await until(
      async () => (await shapingOf('gmail'))[0]?.last_deferral != null,
      20_000,
      'the 421 was not recorded in shaping_state within 20 s',
    );
    expect(await shapingOf('gmail')).toEqual([
      { suspended: true, seconds: BACKOFF_SECONDS, backoff_level: 1, last_deferral: expect.stringMatching(/^421 /) },
    ]);
    // What the operator sees meanwhile: the group suspended, until when, and why.
    const gmailRow = (rows: QueueRow[]) => rows.find((row) => row.mx_group === DOMAINS.gmail.mx);
    const suspendedUntil = (
      await stack.query<{ until: Date }>(`SELECT suspended_until AS until FROM shaping_state WHERE mx_group = $1`, [
        DOMAINS.gmail.mx,
      ])
    )[0]!.until;
    // A suspension the CLI shows is one still in force when it looked.
    expect(gmailRow(await postlaneQueue())).toMatchObject({
      profile: 'gmail',
      source_ip: remote.local,
      backoff_level: 1,
      suspensions: 1,
      suspended_until: suspendedUntil.toISOString(),
      last_reply: expect.stringMatching(/^421 /),
    });
    await until(
      async () => (await emailRow(throttled)).status === 'queued',
      20_000,
      'the throttled email was not queued for a retry',
    );
    expect(await emailRow(throttled)).toMatchObject({ status: 'queued', attempts: 1 });

    // After the back-off (and the outbox's first retry delay, 30 s), the retry is delivered.
    await until(
      async () => verdictsOf(throttled).includes('accepted'),
      90_000,
      'no delivery after the back-off in 90 s',
    );
    for (const id of normal) await waitForEvents(id, ['email.delivered'], 30_000);
    await waitForEvents(throttled, ['email.delivery_delayed', 'email.delivered'], 30_000);
    for (const id of normal) expect(typesOf(id)).toEqual(['email.delivered']);
    expect(typesOf(throttled)).toEqual(['email.delivery_delayed', 'email.delivered']);
    // Each message reached a sink once, the throttled one refused once before.
    for (const id of normal) expect(verdictsOf(id)).toEqual(['accepted']);
    expect(verdictsOf(throttled)).toEqual(['throttled', 'accepted']);
    for (const id of normal) expect(await emailRow(id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(await emailRow(throttled)).toMatchObject({ status: 'sent', attempts: 2 });
    // Resumed by itself: the operator sees no suspension any more.
    expect(gmailRow(await postlaneQueue())).toMatchObject({ suspended_until: null, suspensions: 1 });
  }, 150_000);

  it('a Microsoft-like group answering a burst 451 4.7.650 backs off, then delivers each message once; webhooks show the delay, then the delivery', async () => {
    const ids = [];
    for (const name of ['ada', 'bob', 'cyd']) ids.push(await send(`${name}@${domainOf('microsoft')}`));
    await until(
      async () => (await shapingOf('microsoft'))[0]?.suspended === true,
      60_000,
      'the group was not suspended within 60 s',
    );
    expect(await shapingOf('microsoft')).toEqual([
      {
        suspended: true,
        seconds: BACKOFF_SECONDS,
        backoff_level: 1,
        last_deferral: '451 policy_block (temporary)',
      },
    ]);
    for (const id of ids) await waitForEvents(id, ['email.delivery_delayed', 'email.delivered'], 90_000);
    for (const id of ids) {
      expect(typesOf(id)).toEqual(['email.delivery_delayed', 'email.delivered']);
      // Refused in the burst, or held back by the suspension before it reached the server; then delivered once.
      expect(verdictsOf(id).filter((verdict) => verdict === 'accepted')).toEqual(['accepted']);
      expect(verdictsOf(id).at(-1)).toBe('accepted');
      // An attempt is spent on each answer from the server; one held back by the suspension spends none.
      expect(await emailRow(id)).toMatchObject({ status: 'sent', attempts: verdictsOf(id).length });
    }
    expect(ids.flatMap(verdictsOf)).toContain('burst');
  }, 150_000);

  it('a greylisting server (451 4.7.1 on the first try of a triplet) gets the message on the retry, one copy', async () => {
    const id = await send(`ada@${domainOf('grey')}`);
    await waitForEvents(id, ['email.delivery_delayed', 'email.delivered'], 90_000);
    expect(typesOf(id)).toEqual(['email.delivery_delayed', 'email.delivered']);
    expect(eventsOf(id)[0]!.data.delay).toEqual({
      class: 'policy_block',
      message: expect.stringMatching(/^451 4\.7\.1 Greylisted/),
    });
    const refused = sinkEvents.filter((e) => e.kind === 'refused' && e.address === addressOf.grey);
    expect(refused.map((e) => e.kind === 'refused' && [e.verdict, e.recipient])).toEqual([
      ['greylisted', `ada@${domainOf('grey')}`],
    ]);
    expect(verdictsOf(id)).toEqual(['accepted']);
    expect(await emailRow(id)).toMatchObject({ status: 'sent', attempts: 2 });
  }, 150_000);

  it('shaping limits from the shaping file hold for a group with two workers sending: connections open at once, messages a second', async () => {
    const to = Array.from({ length: 2 * LIMITED.messagesPerSecond }, (_, i) => `reader${i}@${domainOf('limited')}`);
    const { data, error } = await resend.batch.send(
      to.map((address) => ({ from: 'News <news@chaos.test>', to: address, subject: 'Limited', text: 'Hello' })),
    );
    expect(error).toBeNull();
    const ids = data!.data.map((email) => email.id);
    // A second's worth goes at once, the rest is held to the rate or deferred to the retry.
    await until(
      async () => ids.every((id) => verdictsOf(id).includes('accepted')),
      90_000,
      'the limited group did not get every message within 90 s',
    );
    for (const id of ids) expect(verdictsOf(id)).toEqual(['accepted']);
    const events = sinkEvents.filter((e) => e.address === addressOf.limited);
    expect(mostOpen(events)).toBeLessThanOrEqual(LIMITED.connections);
    // The rate is a GCRA: a second's worth may pass at once, then one every 1/rate s; no one-second
    // window holds more than the two.
    expect(mostInOneSecond(events)).toBeLessThanOrEqual(2 * LIMITED.messagesPerSecond);
    // Each connection carried at most its share, so more were opened in turn.
    const carried = new Map<string, number>();
    for (const e of events) if (e.kind === 'message') carried.set(e.connection, (carried.get(e.connection) ?? 0) + 1);
    expect(Math.max(...carried.values())).toBeLessThanOrEqual(LIMITED.messagesPerConnection);
  }, 150_000);

  it('550 5.1.1 bounces as an invalid recipient and suppresses the address; a 550 5.7.1 blocklisting fails the email and suppresses nothing', async () => {
    const unknown = `nobody@${domainOf('users')}`;
    const blocked = `ada@${domainOf('blocked')}`;
    const [unknownId, knownId, blockedId] = [
      await send(unknown),
      await send(`ada@${domainOf('users')}`),
      await send(blocked),
    ];
    await waitForEvents(unknownId!, ['email.bounced'], 60_000);
    await waitForEvents(knownId!, ['email.delivered'], 60_000);
    await waitForEvents(blockedId!, ['email.bounced'], 60_000);

    const [bounce] = eventsOf(unknownId!);
    expect(bounce).toMatchObject({
      type: 'email.bounced',
      data: { bounce: { class: 'invalid_recipient', message: expect.stringMatching(/^550 5\.1\.1 /) } },
    });
    const [block] = eventsOf(blockedId!);
    expect(block).toMatchObject({
      type: 'email.bounced',
      data: { bounce: { class: 'policy_block', message: expect.stringMatching(/^550 5\.7\.1 /) } },
    });
    expect(await emailRow(unknownId!)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(await emailRow(blockedId!)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(verdictsOf(knownId!)).toEqual(['accepted']);

    // Only the unknown address is suppressed: another send to it is refused, one to the blocked address accepted.
    const suppressions = await stack.query<{ email: string; origin: string; source_id: string }>(
      `SELECT email, origin, source_id FROM suppression WHERE email = ANY($1)`,
      [[unknown, blocked]],
    );
    expect(suppressions).toEqual([{ email: unknown, origin: 'bounce', source_id: unknownId }]);
    const again = await resend.emails.send({ from: 'news@chaos.test', to: unknown, subject: 'Again', text: 'Hello' });
    expect(again.error).toMatchObject({ name: 'all_recipients_suppressed' });
    const blockedAgain = await resend.emails.send({
      from: 'news@chaos.test',
      to: blocked,
      subject: 'Again',
      text: 'Hello',
    });
    expect(blockedAgain.error).toBeNull();
  }, 90_000);

  it('a server refusing MAIL before STARTTLS gets the message over STARTTLS', async () => {
    const id = await send(`ada@${domainOf('tls')}`);
    await waitForEvents(id, ['email.delivered'], 60_000);
    expect(typesOf(id)).toEqual(['email.delivered']);
    const arrived = sinkEvents.filter((e) => e.kind === 'message' && e.messageId === messageIdOf(id));
    expect(arrived).toMatchObject([{ verdict: 'accepted', secure: true }]);
    expect(sinkEvents.filter((e) => e.kind === 'refused' && e.address === addressOf.tls)).toEqual([]);
  }, 90_000);

  it('under an MTA-STS enforce policy, an MX certificate for another name or from an untrusted authority gets nothing: the mail is deferred as a TLS failure', async () => {
    const ids = [await send(`ada@${domainOf('sts-name')}`), await send(`ada@${domainOf('sts-ca')}`)];
    for (const id of ids) await waitForEvents(id, ['email.delivery_delayed'], 60_000);
    const policies = await stack.query<{ domain: string; mode: string; mx: string[] }>(
      `SELECT domain, mode, mx FROM mta_sts_policy ORDER BY domain`,
    );
    expect(policies).toEqual([
      { domain: domainOf('sts-ca'), mode: 'enforce', mx: [DOMAINS['sts-name'].mx, DOMAINS['sts-ca'].mx] },
      { domain: domainOf('sts-name'), mode: 'enforce', mx: [DOMAINS['sts-name'].mx, DOMAINS['sts-ca'].mx] },
    ]);
    for (const id of ids) {
      expect(typesOf(id)).toEqual(['email.delivery_delayed']);
      expect(await emailRow(id)).toMatchObject({ status: 'queued', attempts: 1 });
    }
    const [wrongName, untrusted] = ids.map((id) => eventsOf(id)[0]!.data.delay);
    expect(wrongName).toEqual({
      class: 'tls_failure',
      message: expect.stringMatching(/^mx\.sts-name\.test: .*(altnames|does not match)/i),
    });
    expect(untrusted).toEqual({
      class: 'tls_failure',
      message: expect.stringMatching(/^mx\.sts-ca\.test: .*self[- ]signed/i),
    });
    for (const [at, id] of ids.entries())
      expect((await emailRow(id)).last_error).toBe([wrongName, untrusted][at]!.message);
    // The servers were reached (the handshake was tried) and were given no message, in TLS or plaintext.
    for (const name of ['sts-name', 'sts-ca'] as const) {
      const events = sinkEvents.filter((e) => e.address === addressOf[name]);
      expect(events.some((e) => e.kind === 'connections')).toBe(true);
      expect(events.filter((e) => e.kind !== 'connections')).toEqual([]);
    }
  }, 90_000);
});

it('workers SIGKILLed mid-delivery and a new one started: nothing lost, duplicates within the window', async () => {
  const { data, error } = await resend.batch.send(
    Array.from({ length: 40 }, (_, i) => ({
      from: 'News <news@chaos.test>',
      to: `reader${i}@${domainOf('crash')}`,
      subject: 'Crash',
      text: 'Hello',
    })),
  );
  expect(error).toBeNull();
  const ids = data!.data.map((email) => email.id);
  const accepted = () => ids.filter((id) => verdictsOf(id).includes('accepted')).length;
  // The server takes a second over each message: once the first are in, the rest are in flight.
  await until(async () => accepted() > 0, 60_000, 'no message reached the slow server within 60 s');
  const open = sinkEvents.findLast((e) => e.address === addressOf.crash && e.kind === 'connections');
  // Both: whichever holds the claims dies.
  for (const worker of workers) worker.child.kill('SIGKILL');
  await Promise.all(workers.map((worker) => worker.exited));
  const acceptedAtKill = accepted();
  const inFlight = await stack.query(`SELECT 1 FROM email WHERE id = ANY($1) AND status = 'sending'`, [ids]);
  workers = [await stack.startWorker()];

  // Claims come back once their lease (20 s) is over, and the new worker sends them.
  await until(
    async () => accepted() === ids.length,
    90_000,
    async () => `${accepted()} of ${ids.length} delivered within 90 s of the kill`,
  );
  await until(
    async () =>
      (await stack.query(`SELECT 1 FROM email WHERE id = ANY($1) AND status = 'sent'`, [ids])).length === ids.length,
    30_000,
    'the emails were not all recorded as sent within 30 s',
  );
  const copies = ids.map((id) => verdictsOf(id).length);
  const duplicates = copies.reduce((sum, n) => sum + n - 1, 0);
  console.log(
    `direct crash: ${acceptedAtKill} of ${ids.length} delivered and ${inFlight.length} claimed at the kill, ${open?.kind === 'connections' ? open.open : 0} connections open; ${duplicates} duplicates`,
  );
  expect(acceptedAtKill).toBeLessThan(ids.length);
  expect(inFlight.length).toBeGreaterThan(0);
  // The documented window (docs/guarantees.md): what each connection may have taken and not yet recorded.
  expect(duplicates).toBeLessThanOrEqual(UNRECORDED_PER_CONNECTION * (open?.kind === 'connections' ? open.open : 0));
}, 150_000);

it('no sink ever saw more connections open at once than its group allows, nor a message refused by TLS policy', () => {
  for (const [name, domain] of Object.entries(DOMAINS) as [DomainName, (typeof DOMAINS)[DomainName]][]) {
    const events = sinkEvents.filter((e) => e.address === addressOf[name]);
    expect({ name, open: mostOpen(events) <= CONNECTION_LIMITS[domain.profile] }).toEqual({ name, open: true });
  }
  for (const name of ['sts-name', 'sts-ca'] as const)
    expect(sinkEvents.filter((e) => e.address === addressOf[name] && e.kind === 'message')).toEqual([]);
});
