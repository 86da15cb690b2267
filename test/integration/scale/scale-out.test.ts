import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostlaneProcess, spawnPostlane } from '../../support/postlane-process.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let receiver: WebhookReceiver;
const processes: PostlaneProcess[] = [];
const apis: string[] = [];

const env = () => ({
  DATABASE_URL: app.databaseUrl,
  POSTLANE_PORT: '0',
  POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'], max_connections: 4 }]),
  POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1',
  POSTLANE_JOB_CONCURRENCY: '8',
  POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
});

async function start(role: 'api' | 'worker'): Promise<PostlaneProcess> {
  const proc = spawnPostlane(['serve', '--role', role], env());
  processes.push(proc);
  // Four processes start at once: on a loaded machine each can take half a minute.
  await proc.waitForOutput(/postlane started/, 60_000);
  if (role === 'api') apis.push(/"url":"(http:[^"]+)"/.exec(proc.output())![1]!);
  return proc;
}

beforeAll(async () => {
  sink = await startSmtpSink();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await sink.close();
  await receiver.close();
});
// Only for its database and a key: the mail goes through the processes below.
const app = useTestApp({ team: { verifiedDomains: ['acme.test'] } });
beforeAll(async () => {
  await Promise.all([start('api'), start('api'), start('worker'), start('worker')]);
  const hook = await post(apis[0]!, '/webhooks', { endpoint: receiver.url, events: ['email.sent'] });
  expect(hook.status).toBe(201);
}, 90_000);
afterAll(async () => {
  for (const proc of processes) proc.child.kill('SIGTERM');
  await Promise.all(processes.map((proc) => proc.exited));
});

/** The status and JSON body, as the type the caller names. */
const post = <T = unknown>(api: string, path: string, body: unknown) =>
  fetch(`${api}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as T }));

describe('two API and two worker processes on one database', () => {
  it('send every email exactly once under concurrent load, and deliver every email.sent webhook', async () => {
    const mail = (n: number) => ({
      from: 'Load <load@acme.test>',
      to: `r${n}@example.com`,
      subject: `Load ${n}`,
      text: 'x',
    });
    const singles = Array.from({ length: 200 }, (_, n) => post<{ id: string }>(apis[n % 2]!, '/emails', mail(n)));
    const batches = Array.from({ length: 10 }, (_, b) =>
      post<{ data: { id: string }[] }>(
        apis[b % 2]!,
        '/emails/batch',
        Array.from({ length: 10 }, (_, i) => mail(1000 + b * 10 + i)),
      ),
    );
    const responses = await Promise.all([...singles, ...batches]);
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const ids = responses.flatMap((r) => ('data' in r.body ? r.body.data.map((d) => d.id) : [r.body.id]));
    expect(new Set(ids).size).toBe(300);

    await sink.waitFor(300, 60_000);
    // Nothing more arrives once every email is settled as sent: no worker claims one again, and a send in
    // flight holds its row in `sending`. From then on a duplicate from two workers claiming one email would show.
    const count = async (sql: string) =>
      Number((await app.deps.orm.em.fork().getConnection().execute<{ n: string }[]>(sql))[0]!.n);
    await until(async () => (await count(`SELECT count(*) AS n FROM email WHERE status <> 'sent'`)) === 0, 60_000);
    const messageIds = sink.received.map((m) => m.parsed.messageId);
    expect(messageIds).toHaveLength(300);
    expect(new Set(messageIds).size).toBe(300);
    expect(new Set(messageIds)).toEqual(new Set(ids.map((id) => `<${id}@acme.test>`)));
    const statuses = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ status: string; n: string }[]>('SELECT status, count(*) AS n FROM email GROUP BY status');
    expect(statuses).toEqual([{ status: 'sent', n: '300' }]);

    await receiver.waitFor(300, 60_000);
    // Likewise for webhooks: each delivery row was written with its event, and one marked delivered is not sent again.
    await until(
      async () => (await count(`SELECT count(*) AS n FROM webhook_delivery WHERE status <> 'delivered'`)) === 0,
      60_000,
    );
    const sentIds = receiver.received.map((r) => (JSON.parse(r.body) as { data: { email_id: string } }).data.email_id);
    expect(new Set(sentIds)).toEqual(new Set(ids));
    // At least once, and here (no crash) exactly once: one delivery per email, one webhook-id each.
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(300);
  }, 90_000);
});
