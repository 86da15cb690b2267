import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Email, Event, EmailRecipient, Suppression } from '../../../server/entities/index.js';
import { type EmailProvider, ProviderRegistry } from '../../../server/providers/index.js';
import { generateSecretKey, SecretBox } from '../../../server/security/secret-box.js';
import { deliverDue, drainOutbox, releaseExpiredLeases } from '../../../server/services/outbox/drain-outbox.js';
import { getEmailDelivery } from '../../../server/services/emails/email-delivery.js';
import { sweepOutbox } from '../../../server/services/outbox/sweep-outbox.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { startTestApp, useTestApp } from '../../support/test-app.js';

const refusals = new Map([
  ['busy@example.com', 452],
  ['gone@example.com', 550],
  ['gone2@example.com', 550],
  ['later@example.com', 452],
]);
let sink: Awaited<ReturnType<typeof startSmtpSink>>;

beforeAll(async () => {
  sink = await startSmtpSink({ reject: refusals });
});
afterAll(() => sink.close());
const app = useTestApp(() => ({
  env: { POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]) },
  team: { verifiedDomains: ['acme.test'] },
}));

const send = async (to: string | string[], subject = 'hello') => {
  const res = await app.request('POST', '/emails', {
    token: app.token,
    body: { from: 'a@acme.test', to, subject, text: 'body' },
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
};
const load = (id: string) => app.run(() => app.deps.orm.em.findOneOrFail(Email, id));
/** One drain step limited to this email, as a run that claims it among others would treat it. */
const deliver = (id: string) => app.run(() => deliverDue(app.deps, 'us-east-1', [id]));
const drain = () => app.run(() => drainOutbox(app.deps, 'us-east-1'));
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(text, params);
/** The drain runs waiting (not running) for the region, earliest first. */
const waitingDrains = async () =>
  (
    await sql<{ next_run_at: Date }>(
      `SELECT next_run_at FROM agenda_jobs WHERE name = 'email.drain' AND data->>'region' = 'us-east-1' AND locked_at IS NULL ORDER BY next_run_at`,
    )
  ).map((r) => new Date(r.next_run_at));
const eventTypes = async (id: string) =>
  (await app.run(() => app.deps.orm.em.find(Event, { email: id }, { orderBy: { createdAt: 'asc', id: 'asc' } }))).map(
    (e) => e.type,
  );
const bySubject = (subject: string) => sink.received.filter((m) => m.parsed.subject === subject);

describe('the drain', () => {
  it('sends a batch of due emails in one run, each once', async () => {
    const ids = await Promise.all(['b1', 'b2', 'b3', 'b4', 'b5'].map((name) => send(`${name}@example.com`, 'batched')));
    await drain();
    expect(bySubject('batched')).toHaveLength(5);
    for (const id of ids)
      expect(await load(id)).toMatchObject({ status: 'sent', lastEvent: 'sent', attempts: 1, leaseExpiresAt: null });
  });

  it('sends once even when runs race for the same email (compare-and-set claim)', async () => {
    const id = await send('once@example.com', 'claimed once');
    await Promise.all([deliver(id), deliver(id), drain(), drain()]);
    await deliver(id);
    // Every run has returned, and the sink records a message before it answers 250: nothing is still on its way.
    expect(bySubject('claimed once')).toHaveLength(1);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'sent', lastEvent: 'sent', attempts: 1, leaseExpiresAt: null });
    expect(await eventTypes(id)).toEqual(['email.sent']);
  });

  it('retries a 4xx later without sending, keeping the row queued, announced as email.delivery_delayed', async () => {
    const id = await send('busy@example.com', 'try later');
    const before = Date.now();
    await deliver(id);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'queued', lastEvent: 'delivery_delayed', attempts: 1 });
    expect(email.lastError).toMatch(/452/);
    expect(email.sendAfter.getTime()).toBeGreaterThan(before + 20_000);
    expect(await eventTypes(id)).toEqual(['email.delivery_delayed']);
    // The reply travels with the event.
    const [delayed] = await app.run(() => app.deps.orm.em.find(Event, { email: id }));
    expect(delayed!.payload).toMatchObject({ delay: { message: expect.stringMatching(/^452/) } });
    // Not due yet: a stray run claims nothing, and books itself for when it is.
    await drain();
    expect((await load(id)).attempts).toBe(1);
    expect((await waitingDrains()).some((at) => at.getTime() <= email.sendAfter.getTime())).toBe(true);
  });

  it('settles a 5xx for good as a hard bounce: email.bounced, and the address suppressed', async () => {
    const id = await send('gone@example.com', 'never');
    await deliver(id);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'failed', lastEvent: 'bounced', attempts: 1 });
    const events = await app.run(() => app.deps.orm.em.find(Event, { email: id }));
    expect(events.map((e) => e.type)).toEqual(['email.bounced']);
    expect(events[0]!.payload).toMatchObject({
      email_id: id,
      to: ['gone@example.com'],
      bounce: { type: 'Permanent', subType: 'General', message: expect.stringMatching(/550/) },
    });
    expect(bySubject('never')).toHaveLength(0);
    const suppressed = await app.run(() =>
      app.deps.orm.em.find(Suppression, { team: email.team.id, email: 'gone@example.com' }),
    );
    expect(suppressed).toMatchObject([{ origin: 'bounce', sourceId: id }]);
    const added = await sql<{ n: string }>(
      `SELECT count(*) AS n FROM event WHERE type = 'suppression.added' AND payload->>'email' = 'gone@example.com'`,
    );
    expect(Number(added[0]!.n)).toBe(1);
  });

  it('suppresses a classified refusal only when the recipient does not exist: a policy block bounces without suppression', async () => {
    const id = await send(['nobody@classified.test', 'blocked@classified.test'], 'classified');
    const relay = app.deps.providers.forRegion('us-east-1');
    const classifying: EmailProvider = {
      type: 'direct',
      regions: relay.regions,
      takesReturnPath: true,
      send: async (message) => ({
        providerMessageId: message.emailId,
        recipients: [
          {
            address: 'nobody@classified.test',
            accepted: false,
            transient: false,
            response: '550 5.1.1 no such user',
            class: 'invalid_recipient',
          },
          {
            address: 'blocked@classified.test',
            accepted: false,
            transient: false,
            response: '554 5.7.1 sending IP listed on a blocklist',
            class: 'policy_block',
          },
        ],
      }),
      setUpDomain: (d) => relay.setUpDomain(d),
      tearDownDomain: (d) => relay.tearDownDomain(d),
      verify: () => relay.verify(),
      close: async () => {},
    };
    await app.run(() => deliverDue({ ...app.deps, providers: new ProviderRegistry([classifying]) }, 'us-east-1', [id]));
    const events = await app.run(() => app.deps.orm.em.find(Event, { email: id, type: 'email.bounced' }));
    expect(events.map((e) => (e.payload as { bounce: { class: string } }).bounce.class).sort()).toEqual([
      'invalid_recipient',
      'policy_block',
    ]);
    const team = (await load(id)).team.id;
    const suppressed = await app.run(() =>
      app.deps.orm.em.find(Suppression, { team, email: { $like: '%@classified.test' } }),
    );
    expect(suppressed.map((row) => row.email)).toEqual(['nobody@classified.test']);
    // `postlane emails show` names the class before the reply.
    const delivery = await app.run(() => getEmailDelivery(app.deps, team, id));
    expect(delivery.events.map((e) => e.detail).sort()).toEqual([
      'invalid_recipient: 550 5.1.1 no such user',
      'policy_block: 554 5.7.1 sending IP listed on a blocklist',
    ]);
  });

  it('records a delivery per email where acceptance is delivery, written after the bounces so it is the last event, and none for a relay standing in', async () => {
    const ids = await Promise.all([
      send(['in@delivering.test'], 'delivering'),
      send(['in2@delivering.test', 'gone@delivering.test'], 'delivering'),
      send(['relayed@delivering.test'], 'delivering'),
    ]);
    const relay = app.deps.providers.forRegion('us-east-1');
    const delivering: EmailProvider = {
      type: 'direct',
      regions: relay.regions,
      takesReturnPath: true,
      acceptanceIsDelivery: true,
      send: async (message) => ({
        providerMessageId: message.emailId,
        recipients: message.envelopeTo.map((address) =>
          address.startsWith('gone')
            ? {
                address,
                accepted: false,
                transient: false,
                response: '550 5.1.1 no such user',
                class: 'invalid_recipient',
              }
            : {
                address,
                accepted: true,
                transient: false,
                response: '250 2.0.0 queued',
                relayed: address.startsWith('relayed'),
              },
        ),
      }),
      setUpDomain: (d) => relay.setUpDomain(d),
      tearDownDomain: (d) => relay.tearDownDomain(d),
      verify: () => relay.verify(),
      close: async () => {},
    };
    await app.run(() => deliverDue({ ...app.deps, providers: new ProviderRegistry([delivering]) }, 'us-east-1', ids));
    expect(await eventTypes(ids[0]!)).toEqual(['email.sent', 'email.delivered']);
    expect((await eventTypes(ids[1]!)).sort()).toEqual(['email.bounced', 'email.delivered', 'email.sent']);
    for (const id of ids.slice(0, 2)) expect(await load(id)).toMatchObject({ status: 'sent', lastEvent: 'delivered' });
    // Accepted by the warm-up fallback relay: sent, its delivery is the relay's to report.
    expect(await eventTypes(ids[2]!)).toEqual(['email.sent']);
    expect(await load(ids[2]!)).toMatchObject({ status: 'sent', lastEvent: 'sent' });
  });

  it('records each recipient’s verdict when some are refused', async () => {
    const id = await send(['ok@example.com', 'gone2@example.com'], 'mixed');
    await deliver(id);
    expect(await load(id)).toMatchObject({ status: 'sent', lastEvent: 'bounced' });
    const recipients = await app.run(() =>
      app.deps.orm.em.find(EmailRecipient, { email: id }, { orderBy: { address: 'asc' } }),
    );
    expect(recipients.map((r) => [r.address, r.status])).toEqual([
      ['gone2@example.com', 'rejected'],
      ['ok@example.com', 'accepted'],
    ]);
    expect(bySubject('mixed')[0]!.envelope.to).toEqual(['ok@example.com']);
    expect((await eventTypes(id)).sort()).toEqual(['email.bounced', 'email.sent']);
  });
});

describe('a recipient refused for now', () => {
  it('is retried alone, with the same Message-ID, while the others are not sent again', async () => {
    const id = await send(['now@example.com', 'later@example.com'], 'partly later');
    await deliver(id);
    let email = await load(id);
    expect(email).toMatchObject({ status: 'queued', lastEvent: 'delivery_delayed', attempts: 1 });
    expect(email.lastError).toMatch(/452/);
    expect(bySubject('partly later').map((m) => m.envelope.to)).toEqual([['now@example.com']]);
    expect((await eventTypes(id)).sort()).toEqual(['email.delivery_delayed', 'email.sent']);

    refusals.delete('later@example.com');
    await sql(`UPDATE email SET send_after = now() WHERE id = ?`, [id]);
    await deliver(id);
    email = await load(id);
    expect(email).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
    const deliveries = bySubject('partly later');
    expect(deliveries.map((m) => m.envelope.to)).toEqual([['now@example.com'], ['later@example.com']]);
    expect(new Set(deliveries.map((m) => m.parsed.messageId)).size).toBe(1);
    expect((await eventTypes(id)).sort()).toEqual(['email.delivery_delayed', 'email.sent']);
    const recipients = await app.run(() => app.deps.orm.em.find(EmailRecipient, { email: id }));
    expect(recipients.map((r) => r.status)).toEqual(['accepted', 'accepted']);
  });
});

describe('the outbox sweeper', () => {
  it('books a drain for a region with overdue emails and none waiting, and only one', async () => {
    const lost = await send('lost@example.com', 'lost wake-up');
    await sql(`UPDATE email SET send_after = now() - interval '10 minutes' WHERE id = ?`, [lost]);
    // As if the job rows had gone (deleted by hand, or given up): the email row is all that is left.
    await sql(`DELETE FROM agenda_jobs WHERE name = 'email.drain'`);
    expect(await app.run(() => sweepOutbox(app.deps))).toEqual(['us-east-1']);
    expect(await waitingDrains()).toHaveLength(1);
    await app.run(() => sweepOutbox(app.deps));
    expect(await waitingDrains()).toHaveLength(1);

    await drain();
    expect((await load(lost)).status).toBe('sent');
  });

  it('queues again an email whose sender died holding an expired lease, and it is sent', async () => {
    const id = await send('orphan@example.com', 'orphaned lease');
    await sql(
      `UPDATE email SET status = 'sending', lease_expires_at = now() - interval '1 second', attempts = 1 WHERE id = ?`,
      [id],
    );
    await sql(`DELETE FROM agenda_jobs WHERE name = 'email.drain'`);
    expect(await app.run(() => sweepOutbox(app.deps))).toEqual(['us-east-1']);
    expect(await load(id)).toMatchObject({ status: 'queued', leaseExpiresAt: null });
    await drain();
    expect(await load(id)).toMatchObject({ status: 'sent', attempts: 2 });
    expect(bySubject('orphaned lease')).toHaveLength(1);
  });
});

describe('a run that finds an email held by a live lease', () => {
  it('leaves it alone and books a run for when the lease ends instead of waiting for the sweeper', async () => {
    const id = await send('held@example.com', 'held elsewhere');
    // Only this email is left to send: the others in the region are settled or canceled.
    await sql(`UPDATE email SET status = 'canceled' WHERE status = 'queued' AND id <> ?`, [id]);
    await sql(`DELETE FROM agenda_jobs WHERE name = 'email.drain'`);
    const leaseEnds = new Date(Date.now() + 60_000);
    await sql(`UPDATE email SET status = 'sending', lease_expires_at = ? WHERE id = ?`, [leaseEnds, id]);
    await drain();
    expect(bySubject('held elsewhere')).toHaveLength(0);
    expect(await waitingDrains()).toEqual([leaseEnds]);
  });
});

describe('a claim', () => {
  it('stops where its bodies and attachments pass POSTLANE_SEND_BATCH_MB, taking a larger email alone', async () => {
    const small = await startTestApp({ env: { POSTLANE_SEND_BATCH_MB: '1' } });
    try {
      const { token: key } = await small.createTeamWithKey('full_access', { verifiedDomains: ['acme.test'] });
      const attachment = (kb: number) => [
        { filename: 'a.bin', content: Buffer.alloc(kb * 1024, 7).toString('base64') },
      ];
      const ids: string[] = [];
      for (const kb of [400, 400, 400, 1500, 10]) {
        const res = await small.request('POST', '/emails', {
          token: key,
          body: {
            from: 'a@acme.test',
            to: 'big@example.com',
            subject: 'sized',
            text: 'x',
            attachments: attachment(kb),
          },
        });
        expect(res.status).toBe(200);
        ids.push(res.body.id as string);
      }
      const claim = () => small.run(() => deliverDue(small.deps, 'us-east-1', ids));
      // 400 + 400 KB fit in 1 MB, a third does not; 1,500 KB is over the budget alone and goes alone.
      expect([await claim(), await claim(), await claim(), await claim()]).toEqual([2, 1, 1, 1]);
      expect(await claim()).toBe(0);
    } finally {
      await small.close();
    }
  });
});

describe('a poison email', () => {
  const MAX = () => app.deps.config.POSTLANE_SEND_MAX_ATTEMPTS;
  const events = (id: string) =>
    app.run(() => app.deps.orm.em.find(Event, { email: id }, { orderBy: { createdAt: 'asc', id: 'asc' } }));

  it('whose sender domain’s DKIM key no longer opens fails alone: the rest of its batch goes, and it ends failed at its last attempt', async () => {
    const other = await app.createTeamWithKey('full_access', { verifiedDomains: ['sealed.test'] });
    // Sealed under another POSTLANE_SECRET_KEY, as after a restore or a changed key.
    const [domain] = await sql<{ id: string }>(`SELECT id FROM domain WHERE team_id = ? AND name = 'sealed.test'`, [
      other.teamId,
    ]);
    const foreign = new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() }).seal(
      '-----BEGIN PRIVATE KEY-----',
      `dkim:${domain!.id}`,
    );
    await sql(`UPDATE domain SET dkim_private_key = ? WHERE id = ?`, [foreign, domain!.id]);
    const good = await Promise.all(['p1', 'p2', 'p3'].map((name) => send(`${name}@example.com`, 'beside poison')));
    const res = await app.request('POST', '/emails', {
      token: other.token,
      body: { from: 'a@sealed.test', to: 'x@example.com', subject: 'poison', text: 'x' },
    });
    const bad = res.body.id as string;

    // One claim holds all four.
    expect(await app.run(() => deliverDue(app.deps, 'us-east-1', [...good, bad]))).toBe(4);
    expect(bySubject('beside poison')).toHaveLength(3);
    for (const id of good) expect(await load(id)).toMatchObject({ status: 'sent', attempts: 1 });
    // Retried (the key may be restored), without an event.
    expect(await load(bad)).toMatchObject({
      status: 'queued',
      attempts: 1,
      lastError: expect.stringContaining('DKIM key of sealed.test cannot be opened'),
    });

    // Claimed at its last attempt, it fails for good, announced with the reason.
    await sql(`UPDATE email SET send_after = now(), attempts = ? WHERE id = ?`, [MAX() - 1, bad]);
    await deliver(bad);
    expect(await load(bad)).toMatchObject({
      status: 'failed',
      lastEvent: 'failed',
      attempts: MAX(),
      leaseExpiresAt: null,
    });
    const [failed] = await events(bad);
    expect(failed).toMatchObject({
      type: 'email.failed',
      payload: { email_id: bad, error: expect.stringContaining('DKIM key of sealed.test') },
    });
    expect(bySubject('poison')).toHaveLength(0);
    expect(await deliver(bad)).toBe(0);
  });

  it('that cannot be built fails alone, for good, at its first attempt', async () => {
    const good = await Promise.all(['q1', 'q2'].map((name) => send(`${name}@example.com`, 'beside unbuildable')));
    const broken = await send('q3@example.com', 'unbuildable');
    await sql(`UPDATE email SET "from" = 'not an address' WHERE id = ?`, [broken]);
    expect(await app.run(() => deliverDue(app.deps, 'us-east-1', [...good, broken]))).toBe(3);
    expect(bySubject('beside unbuildable')).toHaveLength(2);
    expect(await load(broken)).toMatchObject({ status: 'failed', lastEvent: 'failed', attempts: 1 });
    const [failed] = await events(broken);
    expect(failed).toMatchObject({
      type: 'email.failed',
      payload: { error: expect.stringContaining('stored address') },
    });
    // The reason is logged: it names no address.
    expect(failed!.payload.error).not.toContain('not an address');
  });

  it('that makes the provider throw fails alone, and is tried again', async () => {
    const relay = app.deps.providers.forRegion('us-east-1');
    const good = await Promise.all(['t1', 't2'].map((name) => send(`${name}@example.com`, 'beside throwing')));
    const thrower = await send('t3@example.com', 'throwing');
    // Only `send`: the drain falls back to it per message, and one of them throws (a bug, say).
    const flaky: EmailProvider = {
      type: 'smtp',
      regions: relay.regions,
      takesReturnPath: true,
      send: (message, signal) =>
        message.emailId === thrower
          ? Promise.reject(new TypeError('cannot read properties of undefined'))
          : relay.send(message, signal),
      setUpDomain: (d) => relay.setUpDomain(d),
      tearDownDomain: (d) => relay.tearDownDomain(d),
      verify: () => relay.verify(),
      close: async () => {},
    };
    await app.run(() =>
      deliverDue({ ...app.deps, providers: new ProviderRegistry([flaky]) }, 'us-east-1', [...good, thrower]),
    );
    expect(bySubject('beside throwing')).toHaveLength(2);
    for (const id of good) expect(await load(id)).toMatchObject({ status: 'sent' });
    expect(await load(thrower)).toMatchObject({
      status: 'queued',
      attempts: 1,
      lastError: 'cannot read properties of undefined',
    });
  });

  it('not handed over before the send timeout is due again at once, its attempt given back, and no provider failure', async () => {
    const relay = app.deps.providers.forRegion('us-east-1');
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => send(`slow${i}@example.com`, 'slow relay')));
    // Eight lanes each hold a message until the send timeout passes: the last two are never handed over.
    const slow: EmailProvider = {
      type: 'smtp',
      regions: relay.regions,
      takesReturnPath: true,
      send: (message, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () =>
            resolve({
              providerMessageId: message.emailId,
              recipients: message.envelopeTo.map((address) => ({
                address,
                accepted: true,
                transient: false,
                response: '250 ok',
              })),
            }),
          ),
        ),
      setUpDomain: (d) => relay.setUpDomain(d),
      tearDownDomain: (d) => relay.tearDownDomain(d),
      verify: () => relay.verify(),
      close: async () => {},
    };
    const failing = vi.spyOn(app.deps.logger, 'warn');
    const config = { ...app.deps.config, POSTLANE_SEND_LEASE_SECONDS: 1 };
    await app.run(() => deliverDue({ ...app.deps, config, providers: new ProviderRegistry([slow]) }, 'us-east-1', ids));
    const emails = await Promise.all(ids.map(load));
    expect(emails.filter((e) => e.status === 'sent')).toHaveLength(8);
    const untried = emails.filter((e) => e.status === 'queued');
    expect(untried.map((e) => ({ attempts: e.attempts, lastError: e.lastError }))).toEqual([
      { attempts: 0, lastError: null },
      { attempts: 0, lastError: null },
    ]);
    for (const e of untried) expect(e.sendAfter.getTime()).toBeLessThanOrEqual(Date.now());
    expect(failing.mock.calls.filter(([, msg]) => msg === 'provider failing: emails will be retried')).toEqual([]);
    failing.mockRestore();
  });

  it('whose lease ran out at its last attempt (its worker died) ends failed instead of being claimed past the cap', async () => {
    const id = await send(['gasp@example.com', 'gasp2@example.com'], 'last gasp');
    await sql(
      `UPDATE email SET status = 'sending', lease_expires_at = now() - interval '1 second', attempts = ? WHERE id = ?`,
      [MAX(), id],
    );
    await app.run(() => releaseExpiredLeases(app.deps, 'us-east-1'));
    expect(await load(id)).toMatchObject({
      status: 'failed',
      lastEvent: 'failed',
      attempts: MAX(),
      leaseExpiresAt: null,
    });
    expect(await eventTypes(id)).toEqual(['email.failed']);
    const recipients = await app.run(() => app.deps.orm.em.find(EmailRecipient, { email: id }));
    expect(recipients.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await deliver(id)).toBe(0);
    expect((await load(id)).attempts).toBe(MAX());
  });
});

describe('an email whose lease ran out', () => {
  it('can be deleted even while its lease holds; canceled only once the lease ran out', async () => {
    const [gone, stopped] = await Promise.all([
      send('stuck1@example.com', 'stuck'),
      send('stuck2@example.com', 'stuck'),
    ]);
    const both = `{${gone},${stopped}}`;
    await sql(
      `UPDATE email SET status = 'sending', attempts = 1, lease_expires_at = now() + interval '1 minute' WHERE id = ANY(?::uuid[])`,
      [both],
    );
    // A delete never asks the caller to retry: the in-flight attempt then finds no row and records nothing.
    expect((await app.request('DELETE', `/emails/${gone}`, { token: app.token })).status).toBe(200);
    expect((await app.request('GET', `/emails/${gone}`, { token: app.token })).status).toBe(404);
    expect((await app.request('POST', `/emails/${stopped}/cancel`, { token: app.token })).status).toBe(422);

    await sql(`UPDATE email SET lease_expires_at = now() - interval '1 second' WHERE id = ANY(?::uuid[])`, [both]);
    expect((await app.request('POST', `/emails/${stopped}/cancel`, { token: app.token })).status).toBe(200);
    expect(await load(stopped)).toMatchObject({ status: 'canceled', lastEvent: 'canceled', leaseExpiresAt: null });
    await app.run(() => releaseExpiredLeases(app.deps, 'us-east-1'));
    expect(await deliver(stopped)).toBe(0);
    expect(bySubject('stuck')).toHaveLength(0);
  });
});
