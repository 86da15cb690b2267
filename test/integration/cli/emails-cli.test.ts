import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { runPostlane } from '../../support/postlane-process.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';

// Each command is a process of its own (a couple of seconds each on a busy machine).
vi.setConfig({ testTimeout: 120_000 });

const refusals = new Map([
  ['busy@example.com', 452],
  ['gone@example.com', 550],
]);
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
const providers = () => JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]);

beforeAll(async () => {
  sink = await startSmtpSink({ reject: refusals });
});
afterAll(async () => {
  await sink.close();
});
// One attempt: a refusal for now fails the email at once, so there is failed mail to retry.
const app = useTestApp(() => ({
  env: { POSTLANE_PROVIDERS: providers(), POSTLANE_SEND_MAX_ATTEMPTS: '1' },
  team: { verifiedDomains: ['acme.test', 'other.test'] },
}));

const cli = (args: string[]) =>
  runPostlane([...args, '--team', app.teamId], {
    DATABASE_URL: app.databaseUrl,
    POSTLANE_PROVIDERS: providers(),
    POSTLANE_SEND_MAX_ATTEMPTS: '1',
  });
const json = async (args: string[]) => {
  const result = await cli([...args, '--json']);
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};
const drain = () => app.run(() => deliverDue(app.deps, 'us-east-1'));

describe('postlane emails', () => {
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const sdk = app.sdk(app.token);
    const send = async (name: string, from: string, to: string) => {
      const { data, error } = await sdk.emails.send({ from, to, subject: `subject ${name}`, text: 'body' });
      expect(error).toBeNull();
      ids[name] = data!.id;
    };
    await send('ok', 'Ops <ops@acme.test>', 'ok@example.com');
    await send('busy', 'ops@acme.test', 'busy@example.com');
    await send('gone', 'news@other.test', 'gone@example.com');
    await drain();
    await send('waiting', 'ops@acme.test', 'later@example.com');
  });

  it('lists with filters, newest first, in keyset pages like the API', async () => {
    const all = await json(['emails', 'list']);
    expect(all.data.map((e: { id: string }) => e.id)).toEqual([ids.waiting, ids.gone, ids.busy, ids.ok]);
    expect(all.has_more).toBe(false);

    const failed = await json(['emails', 'list', '--status', 'failed']);
    expect(failed.data.map((e: { id: string }) => e.id).sort()).toEqual([ids.busy, ids.gone].sort());
    expect(failed.data.find((e: { id: string }) => e.id === ids.busy)).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_error: expect.stringMatching(/452/),
    });
    expect((await json(['emails', 'list', '--to', 'BUSY@']))!.data.map((e: { id: string }) => e.id)).toEqual([
      ids.busy,
    ]);
    expect((await json(['emails', 'list', '--domain', 'other.test'])).data.map((e: { id: string }) => e.id)).toEqual([
      ids.gone,
    ]);
    expect((await json(['emails', 'list', '--from', 'ops@acme'])).data).toHaveLength(3);
    expect(
      (await json(['emails', 'list', '--status', 'queued', '--since', '1h'])).data.map((e: { id: string }) => e.id),
    ).toEqual([ids.waiting]);
    expect((await json(['emails', 'list', '--since', '2999-01-01'])).data).toEqual([]);

    const first = await json(['emails', 'list', '--limit', '2']);
    expect(first.has_more).toBe(true);
    const second = await json(['emails', 'list', '--limit', '2', '--after', first.data[1].id]);
    expect([...first.data, ...second.data].map((e: { id: string }) => e.id)).toEqual(
      all.data.map((e: { id: string }) => e.id),
    );
    expect(second.has_more).toBe(false);

    const table = await cli(['emails', 'list', '--status', 'failed']);
    expect(table.code, table.output).toBe(0);
    expect(table.stdout).toContain(ids.busy);
    expect(table.stdout).toMatch(/failed/);
  });

  it('shows one email by id or Message-ID: attempts, last error, recipients and the event timeline', async () => {
    const byId = await json(['emails', 'show', ids.busy!]);
    expect(byId).toMatchObject({
      id: ids.busy,
      status: 'failed',
      attempts: 1,
      max_attempts: 1,
      next_attempt_at: null,
      last_error: expect.stringMatching(/452/),
      recipients: [{ kind: 'to', address: 'busy@example.com', status: 'rejected' }],
    });
    expect(byId.events.map((e: { type: string }) => e.type)).toContain('email.failed');
    const byMessageId = await json(['emails', 'show', byId.message_id.replace(/^<|>$/g, '')]);
    expect(byMessageId.id).toBe(ids.busy);

    const screen = await cli(['emails', 'show', ids.busy!]);
    expect(screen.code, screen.output).toBe(0);
    expect(screen.stdout).toMatch(/Attempts\s+1 of 1/);
    expect(screen.stdout).toMatch(/Last error\s+.*452/);
    expect(screen.stdout).toContain('email.failed');

    const missing = await cli(['emails', 'show', '00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(1);
  });

  it('cancels mail no recipient has accepted, and refuses sent mail', async () => {
    const canceled = await json(['emails', 'cancel', ids.waiting!]);
    expect(canceled).toEqual({ object: 'email', id: ids.waiting, status: 'canceled' });
    await drain();
    expect(sink.received.filter((m) => m.parsed.subject === 'subject waiting')).toHaveLength(0);
    expect((await json(['emails', 'show', ids.waiting!])).status).toBe('canceled');
    const sent = await cli(['emails', 'cancel', ids.ok!]);
    expect(sent.code).toBe(1);
    expect(sent.output).toMatch(/no recipient has accepted/);
  });

  it('retries failed mail, leaving out suppressed recipients, and refuses when none is left', async () => {
    const gone = await cli(['emails', 'retry', ids.gone!]);
    expect(gone.code).toBe(1);
    expect(gone.output).toMatch(/suppressed/);

    refusals.delete('busy@example.com');
    const retried = await json(['emails', 'retry', ids.busy!]);
    expect(retried).toMatchObject({ retried: [{ id: ids.busy, action: 'requeued', recipients: 1, suppressed: 0 }] });
    expect((await json(['emails', 'show', ids.busy!])).status).toBe('queued');
    await drain();
    expect(await json(['emails', 'show', ids.busy!])).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    expect(sink.received.filter((m) => m.parsed.subject === 'subject busy')).toHaveLength(1);

    const sent = await cli(['emails', 'retry', ids.ok!]);
    expect(sent.code).toBe(1);
    expect(sent.output).toMatch(/Only a failed email/);

    // Every failed email is tried; one refused makes the exit status 1, for scripts.
    const run = await cli(['emails', 'retry', '--failed', '--since', '1h', '--json']);
    expect(run.code).toBe(1);
    const bulk = JSON.parse(run.stdout);
    expect(bulk.retried).toEqual([]);
    expect(bulk.refused).toEqual([{ id: ids.gone, reason: expect.stringMatching(/suppressed/) }]);
  });
});
