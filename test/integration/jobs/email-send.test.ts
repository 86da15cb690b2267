import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Email, Event, EmailRecipient } from '../../../server/entities/index.js';
import { deliverEmail } from '../../../server/services/emails/deliver-email.js';
import { sweepOutbox } from '../../../server/services/emails/sweep-outbox.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const refusals = new Map([['busy@example.com', 452], ['gone@example.com', 550], ['later@example.com', 452]]);
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let app: TestApp;
let token: string;

beforeAll(async () => {
  sink = await startSmtpSink({ reject: refusals });
  app = await startTestApp({ env: { POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]) } });
  ({ token } = await app.createTeamWithKey('full_access', { verifiedDomains: ['acme.test'] }));
});
afterAll(async () => {
  await app.close();
  await sink.close();
});

const send = async (to: string | string[], subject = 'hello') => {
  const res = await app.request('POST', '/emails', { token, body: { from: 'a@acme.test', to, subject, text: 'body' } });
  expect(res.status).toBe(200);
  return res.body.id as string;
};
const load = (id: string) => app.run(() => app.deps.orm.em.findOneOrFail(Email, id));
const deliver = (id: string) => app.run(() => deliverEmail(app.deps, id));
const bySubject = (subject: string) => sink.received.filter((m) => m.parsed.subject === subject);

describe('the send job', () => {
  it('sends once even when the job runs twice at the same time (compare-and-set claim)', async () => {
    const id = await send('once@example.com', 'claimed once');
    await Promise.all([deliver(id), deliver(id), deliver(id)]);
    await deliver(id);
    await sink.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(bySubject('claimed once')).toHaveLength(1);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'sent', lastEvent: 'sent', attempts: 1, leaseExpiresAt: null });
    const events = await app.run(() => app.deps.orm.em.find(Event, { email: id }));
    expect(events.map((e) => e.type)).toEqual(['email.sent']);
  });

  it('retries a 4xx later without sending, keeping the row queued', async () => {
    const id = await send('busy@example.com', 'try later');
    const before = Date.now();
    await deliver(id);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'queued', lastEvent: 'queued', attempts: 1 });
    expect(email.lastError).toMatch(/452/);
    expect(email.sendAfter.getTime()).toBeGreaterThan(before + 20_000);
    expect(app.recorded.at(-1)).toMatchObject({ name: 'email.send', data: { emailId: id }, at: email.sendAfter });
    // Not due yet: a stray job run claims nothing.
    await deliver(id);
    expect((await load(id)).attempts).toBe(1);
  });

  it('fails a 5xx for good, with an email.failed event', async () => {
    const id = await send('gone@example.com', 'never');
    await deliver(id);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'failed', lastEvent: 'failed', attempts: 1 });
    const events = await app.run(() => app.deps.orm.em.find(Event, { email: id }));
    expect(events.map((e) => e.type)).toEqual(['email.failed']);
    expect(bySubject('never')).toHaveLength(0);
  });

  it('records each recipient’s verdict when some are refused', async () => {
    const id = await send(['ok@example.com', 'gone@example.com'], 'mixed');
    await deliver(id);
    expect(await load(id)).toMatchObject({ status: 'sent', lastEvent: 'sent' });
    const recipients = await app.run(() => app.deps.orm.em.find(EmailRecipient, { email: id }, { orderBy: { address: 'asc' } }));
    expect(recipients.map((r) => [r.address, r.status])).toEqual([
      ['gone@example.com', 'rejected'],
      ['ok@example.com', 'accepted'],
    ]);
    expect(bySubject('mixed')[0]!.envelope.to).toEqual(['ok@example.com']);
  });
});

describe('a recipient refused for now', () => {
  it('is retried alone, with the same Message-ID, while the others are not sent again', async () => {
    const id = await send(['now@example.com', 'later@example.com'], 'partly later');
    await deliver(id);
    let email = await load(id);
    expect(email).toMatchObject({ status: 'queued', lastEvent: 'sent', attempts: 1 });
    expect(email.lastError).toMatch(/452/);
    expect(bySubject('partly later').map((m) => m.envelope.to)).toEqual([['now@example.com']]);

    refusals.delete('later@example.com');
    await app.deps.orm.em.fork().getConnection().execute(`UPDATE email SET send_after = now() WHERE id = ?`, [id]);
    await deliver(id);
    email = await load(id);
    expect(email).toMatchObject({ status: 'sent', lastEvent: 'sent', attempts: 2, lastError: null });
    const deliveries = bySubject('partly later');
    expect(deliveries.map((m) => m.envelope.to)).toEqual([['now@example.com'], ['later@example.com']]);
    expect(new Set(deliveries.map((m) => m.parsed.messageId)).size).toBe(1);
    const events = await app.run(() => app.deps.orm.em.find(Event, { email: id }));
    expect(events.map((e) => e.type)).toEqual(['email.sent']);
    const recipients = await app.run(() => app.deps.orm.em.find(EmailRecipient, { email: id }));
    expect(recipients.map((r) => r.status)).toEqual(['accepted', 'accepted']);
  });
});

describe('the outbox sweeper', () => {
  it('re-enqueues a due email whose enqueue was lost, and leaves one with a live job alone', async () => {
    const lost = await send('lost@example.com', 'lost enqueue');
    const live = await send('live@example.com', 'live job');
    const connection = app.deps.orm.em.fork().getConnection();
    await connection.execute(`UPDATE email SET send_after = now() - interval '10 minutes' WHERE id IN (?, ?)`, [lost, live]);
    // As if the job row had gone (deleted by hand, or given up): the email row is all that is left.
    await connection.execute(`DELETE FROM agenda_jobs WHERE data->>'emailId' = ?`, [lost]);
    const recordedBefore = app.recorded.length;
    const swept = await app.run(() => sweepOutbox(app.deps));
    const enqueued = app.recorded.slice(recordedBefore).map((j) => (j.data as { emailId: string }).emailId);
    expect(enqueued).toContain(lost);
    expect(enqueued).not.toContain(live);
    expect(swept).toBe(enqueued.length);

    await deliver(lost);
    expect((await load(lost)).status).toBe('sent');
  });

  it('reclaims an email whose sender died holding an expired lease', async () => {
    const id = await send('orphan@example.com', 'orphaned lease');
    await app.deps.orm.em.fork().getConnection().execute(
      `UPDATE email SET status = 'sending', lease_expires_at = now() - interval '1 second', attempts = 1 WHERE id = ?`,
      [id],
    );
    await deliver(id);
    expect(await load(id)).toMatchObject({ status: 'sent', attempts: 2 });
    expect(bySubject('orphaned lease')).toHaveLength(1);
  });
});

describe('a claim that loses to a live lease', () => {
  it('comes back when the lease ends instead of waiting for the sweeper', async () => {
    const id = await send('held@example.com', 'held elsewhere');
    const leaseEnds = new Date(Date.now() + 60_000);
    await app.deps.orm.em.fork().getConnection().execute(`UPDATE email SET status = 'sending', lease_expires_at = ? WHERE id = ?`, [leaseEnds, id]);
    const recordedBefore = app.recorded.length;
    await deliver(id);
    expect(bySubject('held elsewhere')).toHaveLength(0);
    expect(app.recorded.slice(recordedBefore)).toEqual([{ name: 'email.send', data: { emailId: id }, at: new Date(leaseEnds.getTime() + 1_000) }]);
  });
});
