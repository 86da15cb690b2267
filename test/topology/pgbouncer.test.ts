import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, databaseUrl, queryDatabase, uniqueDatabaseName } from '../support/db.js';
import { type PgBouncer, startPgBouncer } from '../support/pgbouncer.js';
import { type PostlaneProcess, runPostlane, spawnPostlane } from '../support/postlane-process.js';
import { startSmtpSink } from '../support/smtp-sink.js';
import { until } from '../support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Postlane as an operator deploys it behind PgBouncer 1.18 in transaction mode (issue 25, item 1):
 * DATABASE_URL is the pooler, POSTLANE_DATABASE_DIRECT_URL PostgreSQL itself. The CLI migrates an
 * empty database and creates the team, key and domain; one API and one worker process serve the
 * official SDK over every resource, and mail and webhooks go out through the worker.
 */
let bouncer: PgBouncer;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let receiver: WebhookReceiver;
let direct: string;
let name: string;
let apiUrl: string;
let resend: Resend;
const processes: PostlaneProcess[] = [];

const env = () => ({
  DATABASE_URL: bouncer.url(name),
  POSTLANE_DATABASE_DIRECT_URL: direct,
  POSTLANE_PORT: '0',
  POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]),
  // A poll a minute apart: mail goes out within this test only if wake-ups reach the worker (LISTEN on the direct URL).
  POSTLANE_JOB_PROCESS_EVERY_SECONDS: '60',
  POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
});

async function cli<T>(args: string[]): Promise<T> {
  const result = await runPostlane([...args, '--json'], env());
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout) as T;
}

async function start(role: 'api' | 'worker'): Promise<string> {
  const proc = spawnPostlane(['serve', '--role', role], env());
  processes.push(proc);
  await proc.waitForOutput(/postlane started/, 30_000);
  return /"url":"(http:[^"]+)"/.exec(proc.output())?.[1] ?? '';
}

beforeAll(async () => {
  name = uniqueDatabaseName('postlane_pgbouncer');
  direct = databaseUrl(name);
  await adminQuery(`CREATE DATABASE "${name}"`);
  [bouncer, sink, receiver] = await Promise.all([
    startPgBouncer(databaseUrl('postgres'), { poolSize: 8 }),
    startSmtpSink(),
    startWebhookReceiver(),
  ]);
}, 60_000);
afterAll(async () => {
  for (const proc of processes) proc.child.kill('SIGTERM');
  await Promise.all(processes.map((proc) => proc.exited));
  await Promise.all([bouncer?.stop(), sink?.close(), receiver?.close()]);
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
});

describe('behind PgBouncer in transaction mode', () => {
  it('the CLI migrates and sets up a team, and doctor says what it found', async () => {
    const { applied } = await cli<{ applied: string[] }>(['migrate']);
    expect(applied.length).toBeGreaterThan(0);
    const team = await cli<{ id: string }>(['teams', 'create', '--name', 'Acme']);
    const key = await cli<{ token: string }>(['keys', 'create', '--name', 'sdk', '--team', team.id]);
    await cli(['domains', 'add', 'acme.test', '--team', team.id]);
    // No DNS here: the domain is marked verified as its DNS check would.
    await queryDatabase(direct, `UPDATE domain SET status = 'verified', verified_at = now(), next_check_at = NULL`);

    const doctor = await runPostlane(['doctor', '--json'], env());
    const check = (
      JSON.parse(doctor.stdout) as { checks: { check: string; status: string; detail: string }[] }
    ).checks.find((c) => c.check === 'database_pooler')!;
    expect(check.status, check.detail).toBe('ok');
    expect(check.detail).toMatch(
      /^DATABASE_URL: two open connections shared server process \d+, URL port \d+, server port \d+: something in between \(a transaction pooler\); POSTLANE_DATABASE_DIRECT_URL: two open connections had server processes/,
    );
    // The same pooler without the direct URL: the one setting that must not be forgotten.
    const alone = await runPostlane(['doctor', '--json'], {
      ...env(),
      POSTLANE_DATABASE_DIRECT_URL: bouncer.url(name),
    });
    expect(
      (JSON.parse(alone.stdout) as { checks: { check: string; status: string; fix?: string }[] }).checks.find(
        (c) => c.check === 'database_pooler',
      ),
    ).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('POSTLANE_DATABASE_DIRECT_URL'),
    });

    [apiUrl] = await Promise.all([start('api'), start('worker')]);
    process.env.RESEND_BASE_URL = apiUrl;
    try {
      resend = new Resend(key.token);
    } finally {
      delete process.env.RESEND_BASE_URL;
    }
  }, 90_000);

  it('serves the official SDK over every resource, and the worker delivers mail and webhooks', async () => {
    const hook = await resend.webhooks.create({ endpoint: receiver.url, events: ['email.sent'] });
    expect(hook.error).toBeNull();
    expect((await resend.webhooks.list()).data?.data.map((w) => w.id)).toContain(hook.data!.id);

    const { data: domains } = await resend.domains.list();
    expect(domains?.data.map((d) => [d.name, d.status])).toEqual([['acme.test', 'verified']]);
    const domain = domains!.data[0]!;
    expect((await resend.domains.get(domain.id)).data).toMatchObject({ name: 'acme.test', status: 'verified' });

    const mail = (to: string) => ({ from: 'Acme <hello@acme.test>', to, subject: `Hello ${to}`, text: 'Hi' });
    const first = await resend.emails.send(mail('one@example.com'), { idempotencyKey: 'order-1' });
    expect(first.error).toBeNull();
    const again = await resend.emails.send(mail('one@example.com'), { idempotencyKey: 'order-1' });
    expect(again.data?.id).toBe(first.data!.id);
    const batch = await resend.batch.send([mail('two@example.com'), mail('three@example.com')]);
    expect(batch.error).toBeNull();
    const ids = [first.data!.id, ...batch.data!.data.map((e) => e.id)];

    const template = await resend.templates
      .create({
        name: 'welcome',
        subject: 'Welcome {{{NAME}}}',
        html: '<p>Hi {{{NAME}}}</p>',
        variables: [{ key: 'NAME', type: 'string', fallbackValue: 'there' }],
      })
      .publish();
    expect(template.error).toBeNull();
    expect((await resend.templates.get(template.data!.id)).data).toMatchObject({
      name: 'welcome',
      status: 'published',
    });

    const segment = await resend.segments.create({ name: 'Newsletter' });
    const topic = await resend.topics.create({ name: 'News', defaultSubscription: 'opt_in' });
    expect(topic.error).toBeNull();
    for (const email of ['ann@example.com', 'bob@example.com']) {
      const contact = await resend.contacts.create({ email, segments: [{ id: segment.data!.id }] });
      expect(contact.error).toBeNull();
    }
    expect((await resend.contacts.list()).data?.data).toHaveLength(2);
    const broadcast = await resend.broadcasts.create({
      segmentId: segment.data!.id,
      from: 'Acme <news@acme.test>',
      subject: 'News',
      html: '<p>News</p><a href="{{{UNSUBSCRIBE_URL}}}">unsubscribe</a>',
    });
    expect(broadcast.error).toBeNull();
    expect((await resend.broadcasts.send(broadcast.data!.id)).error).toBeNull();

    const key = await resend.apiKeys.create({ name: 'ci' });
    expect((await resend.apiKeys.list()).data?.data.map((k) => k.id)).toContain(key.data!.id);
    expect((await resend.apiKeys.remove(key.data!.id)).error).toBeNull();

    // Three emails and the broadcast's two, each once.
    const received = await sink.waitFor(5, 60_000);
    expect(received.map((m) => m.envelope.to[0]).sort()).toEqual([
      'ann@example.com',
      'bob@example.com',
      'one@example.com',
      'three@example.com',
      'two@example.com',
    ]);
    await until(async () => (await resend.broadcasts.get(broadcast.data!.id)).data?.status === 'sent', 30_000);
    for (const id of ids) expect((await resend.emails.get(id)).data?.last_event).toBe('sent');

    await receiver.waitFor(5, 60_000);
    const verifier = new Webhook((await resend.webhooks.get(hook.data!.id)).data!.signing_secret);
    const sent = receiver.received.map(
      (r) =>
        (verifier.verify(r.body, r.headers as Record<string, string>) as { data: { email_id: string } }).data.email_id,
    );
    expect(sent).toEqual(expect.arrayContaining(ids));
    for (const proc of processes) expect(proc.child.exitCode).toBeNull();
  }, 120_000);
});
