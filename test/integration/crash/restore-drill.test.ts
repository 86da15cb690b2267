import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import pg from 'pg';
import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import { afterAll, expect, it } from 'vitest';
import { type ChaosStack, startStack } from '../../support/chaos.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { createThrowawayCluster, type ThrowawayCluster } from '../../support/throwaway-cluster.js';
import { until } from '../../support/until.js';
import { startWebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * The restore drill of docs/production.md ("Backups"), run for real: a running appliance (compiled
 * `postlane serve`, API and worker) with mail sent, queued and scheduled and a webhook endpoint is
 * dumped with pg_dump; the original goes on for a while (the window: it accepts and sends mail the
 * dump does not know of); the dump is restored into a fresh cluster and Postlane started on it with
 * the same POSTLANE_SECRET_KEY. The restored appliance sends what was queued or scheduled in the dump
 * exactly once, nothing sent before the dump again, signs with the domain's DKIM key and the
 * endpoint's webhook secret, and the API key works through the SDK.
 */
const run = promisify(execFile);
const SENT = 3;
const QUEUED = 6;
const SCHEDULED = 2;
const AFTER_DUMP = 4;

let stack: ChaosStack | undefined;
let restored: ThrowawayCluster | undefined;
let folder: string | undefined;
const sink = await startSmtpSink();
const hooks = await startWebhookReceiver();
afterAll(async () => {
  await stack?.close();
  await restored?.remove();
  if (folder) await rm(folder, { recursive: true, force: true });
  await sink.close();
  await hooks.close();
});

const messageIds = () => sink.received.map((mail) => mail.parsed.messageId!);
const count = (ids: string[], id: string) => ids.filter((seen) => seen === id).length;

it('pg_dump of a running appliance, restored into a fresh cluster: queued and scheduled mail sent once, secrets open, keys work', async () => {
  stack = await startStack({
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]),
  });
  const api = await stack.startApi();
  let worker = await stack.startWorker();
  const token = stack.headers.authorization.slice('Bearer '.length);
  const resend = new Resend(token, { baseUrl: stack.apiUrl });
  const hook = await resend.webhooks.create({ endpoint: hooks.url, events: ['email.sent'] });
  expect(hook.error).toBeNull();
  const { data: domains } = await resend.domains.list();
  const { data: domain } = await resend.domains.get(domains!.data[0]!.id);
  const dkim = domain!.records.find((record) => record.record === 'DKIM')!;

  const send = async (subject: string, scheduledAt?: string) => {
    const { data, error } = await resend.emails.send({
      from: 'Drill <news@chaos.test>',
      to: `${subject.replace(/\W/g, '-')}@example.com`,
      subject,
      text: 'Hello',
      scheduledAt,
    });
    if (error) throw new Error(`${subject}: ${error.message}`);
    return data!.id;
  };
  const sendAll = (prefix: string, n: number, scheduledAt?: string) =>
    Promise.all(Array.from({ length: n }, (_, i) => send(`${prefix} ${i}`, scheduledAt)));
  const messageIdOf = (id: string) => `<${id}@chaos.test>`;

  // Before the dump: some mail sent, then the worker stopped so that some stays queued, and some scheduled an hour out.
  const sent = await sendAll('sent', SENT);
  await until(async () => sink.received.length >= SENT && hooks.received.length >= SENT);
  worker.child.kill('SIGTERM');
  await worker.exited;
  const queued = await sendAll('queued', QUEUED);
  const scheduled = await sendAll('scheduled', SCHEDULED, new Date(Date.now() + 3_600_000).toISOString());

  folder = await mkdtemp(join(tmpdir(), 'postlane-drill-'));
  const dump = join(folder, 'postlane.dump');
  const dumpedAt = Date.now();
  await run('pg_dump', ['--format=custom', `--file=${dump}`, stack.cluster.url('postlane')]);

  // The window: the original goes on after the dump, accepting mail and sending what was queued.
  const afterDump = await sendAll('after dump', AFTER_DUMP);
  worker = await stack.startWorker();
  const window = SENT + QUEUED + AFTER_DUMP;
  await until(async () => sink.received.length >= window && hooks.received.length >= window, 60_000);
  for (const proc of [api, worker]) {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
  const windowSeconds = (Date.now() - dumpedAt) / 1000;
  const before = messageIds();

  // The restore: a fresh cluster, the dump, Postlane with the same secret key (the stack's) on the same port.
  restored = await createThrowawayCluster();
  const admin = new pg.Client({ connectionString: restored.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE postlane');
  await admin.end();
  await run('pg_restore', ['--no-owner', `--dbname=${restored.url('postlane')}`, dump]);
  const onRestored = { DATABASE_URL: restored.url('postlane') };
  const [restoredApi] = [stack.spawn('api', undefined, onRestored), stack.spawn('worker', undefined, onRestored)];
  await restoredApi!.waitForOutput(/postlane started/, 60_000);
  const restoredAt = Date.now();

  // The API key works through the SDK; what was accepted after the dump is not there.
  for (const id of afterDump) expect((await resend.emails.get(id)).error).toMatchObject({ statusCode: 404 });
  for (const id of scheduled) {
    const moved = await resend.emails.update({ id, scheduledAt: new Date(Date.now() - 1_000).toISOString() });
    expect(moved.error).toBeNull();
  }
  const expected = [...queued, ...scheduled].map(messageIdOf);
  await until(async () => expected.every((id) => messageIds().includes(id)), 60_000);
  await until(async () => hooks.received.length >= window + QUEUED + SCHEDULED, 60_000);

  // Exactly what the dump had queued or scheduled was sent again, each once; nothing sent before the dump.
  const after = messageIds().slice(before.length);
  expect([...after].sort()).toEqual([...expected].sort());
  for (const id of sent.map(messageIdOf)) expect(count(messageIds(), id)).toBe(1);
  for (const id of scheduled.map(messageIdOf)) expect(count(messageIds(), id)).toBe(1);
  // The window, in numbers: each email the original sent after the dump arrived twice, each accepted after it is gone.
  const duplicated = queued.map(messageIdOf).filter((id) => count(messageIds(), id) === 2);
  expect(duplicated).toHaveLength(QUEUED);

  // The restored appliance signs with the domain's DKIM key (the published record verifies it) and the webhook secret.
  const resolver = async (name: string) =>
    name === dkim.name + '.chaos.test' || name === dkim.name ? [[dkim.value]] : [];
  for (const mail of sink.received.slice(before.length)) {
    const { results } = await dkimVerify(Buffer.from(mail.raw), { resolver });
    expect(results[0]?.status.result).toBe('pass');
  }
  const signer = new Webhook(hook.data!.signing_secret);
  for (const request of hooks.received) {
    const headers = Object.fromEntries(
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request.headers[name])]),
    );
    expect(signer.verify(request.body, headers)).toMatchObject({ type: 'email.sent' });
  }
  const { data: restoredEmail } = await resend.emails.get(queued[0]!);
  expect(restoredEmail?.last_event).toMatch(/^(sent|delivered)$/);

  process.stderr.write(
    `[restore drill] window: ${windowSeconds.toFixed(1)} s from dump to the original's stop; ` +
      `${duplicated.length} sent in it were sent again, ${afterDump.length} accepted in it are not in the restore; ` +
      `restore to first request: ${((restoredAt - dumpedAt) / 1000 - windowSeconds).toFixed(1)} s\n`,
  );
}, 240_000);
