import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ChaosStack, startStack } from '../support/chaos.js';
import { startDnsServer } from '../support/dns-server.js';
import { inNetns } from '../support/throwaway-cluster.js';
import { until } from '../support/until.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { createRemoteHost, type RemoteHost } from './netns.js';

/**
 * Direct delivery through the whole appliance (compiled `postlane serve`, API and worker): the
 * recipients' mail servers are SMTP servers on port 25 of addresses in a network namespace of the
 * test's own, found through a DNS server of its own. One domain's MX is a Gmail-like group (its
 * host under google.com, so the `gmail` shaping profile) that answers the first message
 * `421 4.7.28`; the other's accepts everything. `npm test` builds first; it runs as root.
 */
const BACKOFF_SECONDS = 20;
const THROTTLED = 'throttled.test';
const NORMAL = 'normal.test';
const GMAIL_MX = 'gmail-smtp-in.l.google.com';

let remote: RemoteHost;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let sinks: ChildProcess;
let stack: ChaosStack;
const hooks = await startWebhookReceiver();
/** What the sinks printed: `<address> accepted|throttled <Message-ID>`. */
const arrivals: { address: string; verdict: string; messageId: string }[] = [];

beforeAll(async () => {
  remote = await createRemoteHost('mx', 2);
  try {
    const [throttledMx, normalMx] = remote.addresses as [string, string];
    dns = await startDnsServer();
    dns.set('MX', THROTTLED, [`10 ${GMAIL_MX}`]);
    dns.set('A', GMAIL_MX, [throttledMx]);
    dns.set('MX', NORMAL, [`10 mx.${NORMAL}`]);
    dns.set('A', `mx.${NORMAL}`, [normalMx]);

    const script = fileURLToPath(new URL('./mx-sink-process.ts', import.meta.url));
    const specs = [{ address: throttledMx, throttle: 1 }, { address: normalMx }];
    const [file, ...args] = [
      ...inNetns(remote.netns),
      process.execPath,
      '--import',
      'tsx',
      script,
      JSON.stringify(specs),
    ];
    sinks = spawn(file!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: sinks.stdout! });
    const listening = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        if (line === 'listening') return resolve();
        const [address, verdict, messageId] = line.split(' ') as [string, string, string];
        if (verdict === 'accepted' || verdict === 'throttled') arrivals.push({ address, verdict, messageId });
      }),
    );
    await Promise.race([
      listening,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the MX sinks did not start in 20 s')), 20_000)),
    ]);

    stack = await startStack({
      POSTLANE_PROVIDERS: JSON.stringify([
        { type: 'direct', regions: ['us-east-1'], ehlo_name: 'mta.chaos.test', source_ips: [remote.local] },
      ]),
      POSTLANE_DNS_SERVERS: dns.address,
      POSTLANE_SHAPING_BACKOFF_SECONDS: String(BACKOFF_SECONDS),
    });
    await stack.startApi();
    await stack.startWorker();
  } catch (err) {
    await remote.remove();
    throw err;
  }
}, 120_000);

afterAll(async () => {
  await stack?.close();
  sinks?.kill('SIGKILL');
  await dns?.close();
  await hooks.close();
  await remote?.remove();
});

interface EmailEvent {
  type: string;
  data: { email_id: string };
}

it('a Gmail-like group answering 421 4.7.28 is suspended and its mail delivered after the back-off; the other domain at once; webhooks tell both', async () => {
  const token = stack.headers.authorization.slice('Bearer '.length);
  const resend = new Resend(token, { baseUrl: stack.apiUrl });
  const { data: hook, error: hookError } = await resend.webhooks.create({
    endpoint: hooks.url,
    events: ['email.delivered', 'email.delivery_delayed'],
  });
  expect(hookError).toBeNull();
  const send = async (to: string) => {
    const { data, error } = await resend.emails.send({
      from: 'News <news@chaos.test>',
      to,
      subject: to,
      text: 'Hello',
    });
    if (error) throw new Error(`${to}: ${error.message}`);
    return data!.id;
  };
  const normal = [await send(`ada@${NORMAL}`), await send(`bob@${NORMAL}`)];
  const throttled = await send(`cyd@${THROTTLED}`);
  const messageIdOf = (id: string) => `<${id}@chaos.test>`;
  const arrived = (id: string, verdict: string) =>
    arrivals.filter((a) => a.messageId === messageIdOf(id) && a.verdict === verdict);

  // The first attempts: the normal domain's mail delivered, the Gmail-like group's answered 421.
  await until(
    async () =>
      normal.every((id) => arrived(id, 'accepted').length === 1) && arrived(throttled, 'throttled').length === 1,
    60_000,
    'the first attempts did not reach the sinks within 60 s',
  );
  // The worker records the reply just after the sink sends it.
  const gmailState = () =>
    stack.query<{ suspended: boolean; seconds: number; last_deferral: string | null; backoff_level: number }>(
      `SELECT suspended_until > now() AS suspended, extract(epoch FROM suspended_until - backoff_changed_at)::float8 AS seconds,
              last_deferral, backoff_level
       FROM shaping_state WHERE profile = 'gmail'`,
    );
  await until(
    async () => (await gmailState())[0]?.last_deferral != null,
    20_000,
    'the 421 was not recorded in shaping_state within 20 s',
  );
  expect(await gmailState()).toEqual([
    { suspended: true, seconds: BACKOFF_SECONDS, backoff_level: 1, last_deferral: expect.stringMatching(/^421 /) },
  ]);
  await until(
    async () =>
      (await stack.query(`SELECT 1 FROM email WHERE id = $1 AND status = 'queued' AND attempts = 1`, [throttled]))
        .length === 1,
    20_000,
    'the throttled email was not queued for a retry',
  );

  // After the back-off (the retry is due when the suspension ends), the retry is delivered.
  await until(
    async () => arrived(throttled, 'accepted').length === 1,
    90_000,
    'no delivery after the back-off in 90 s',
  );
  await until(
    async () => hooks.received.length >= 4,
    30_000,
    `the webhooks did not all arrive within 30 s (${hooks.received.length} of 4)`,
  );

  const webhook = new Webhook(hook!.signing_secret);
  const events = hooks.received.map(
    (request) => webhook.verify(request.body, request.headers as Record<string, string>) as EmailEvent,
  );
  const of = (id: string) => events.filter((e) => e.data.email_id === id).map((e) => e.type);
  for (const id of normal) expect(of(id)).toEqual(['email.delivered']);
  expect(of(throttled)).toEqual(['email.delivery_delayed', 'email.delivered']);
  // Each message reached a sink once, the throttled one refused once before.
  expect(arrivals.map((a) => `${a.verdict} ${a.messageId}`).sort()).toEqual(
    [
      ...normal.map((id) => `accepted ${messageIdOf(id)}`),
      `throttled ${messageIdOf(throttled)}`,
      `accepted ${messageIdOf(throttled)}`,
    ].sort(),
  );
  const rows = await stack.query<{ id: string; status: string; attempts: number }>(
    `SELECT id, status, attempts FROM email ORDER BY attempts, id`,
  );
  expect(Object.fromEntries(rows.map((r) => [r.id, [r.status, r.attempts]]))).toEqual({
    [normal[0]!]: ['sent', 1],
    [normal[1]!]: ['sent', 1],
    [throttled]: ['sent', 2],
  });
}, 240_000);
