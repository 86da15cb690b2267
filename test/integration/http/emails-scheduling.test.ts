import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';

let sink: Awaited<ReturnType<typeof startSmtpSink>>;

let resend: Resend;

beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(() => sink.close());
const app = useTestApp(() => ({
  env: { POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]) },
  team: { verifiedDomains: ['acme.test'] },
}));
beforeAll(() => {
  resend = new Resend(app.token, { baseUrl: app.url });
});

const inOneHour = () => new Date(Date.now() + 3_600_000).toISOString();
const schedule = async (subject: string, at = inOneHour()) => {
  const { data, error } = await resend.emails.send({
    from: 'a@acme.test',
    to: 'b@example.com',
    subject,
    text: 'later',
    scheduledAt: at,
  });
  expect(error).toBeNull();
  return data!.id;
};
const get = async (id: string) => (await resend.emails.get(id)).data!;
const deliver = (id: string) => app.run(() => deliverDue(app.deps, 'us-east-1', [id]));
const arrived = (subject: string) => sink.received.filter((m) => m.parsed.subject === subject).length;

describe('scheduled emails', () => {
  it('wait for their time: an early job run sends nothing', async () => {
    const at = inOneHour();
    const id = await schedule('scheduled later', at);
    expect(await get(id)).toMatchObject({ last_event: 'scheduled', scheduled_at: at });
    await deliver(id);
    expect(arrived('scheduled later')).toBe(0);
    expect((await get(id)).last_event).toBe('scheduled');
  });

  it('can be moved, and a time in the past sends at once', async () => {
    const id = await schedule('moved');
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const moved = await resend.emails.update({ id, scheduledAt: later });
    expect(moved.error).toBeNull();
    expect(moved.data).toEqual({ object: 'email', id });
    expect((await get(id)).scheduled_at).toBe(later);

    await resend.emails.update({ id, scheduledAt: new Date(Date.now() - 1_000).toISOString() });
    expect((await get(id)).last_event).toBe('queued');
    await deliver(id);
    expect(arrived('moved')).toBe(1);
    expect((await resend.emails.update({ id, scheduledAt: later })).error).toMatchObject({ statusCode: 422 });
  });

  it('can be canceled, and then never go out', async () => {
    const id = await schedule('canceled');
    const canceled = await resend.emails.cancel(id);
    expect(canceled.error).toBeNull();
    expect(canceled.data).toEqual({ object: 'email', id });
    expect((await get(id)).last_event).toBe('canceled');
    await app.deps.orm.em
      .fork()
      .getConnection()
      .execute(`UPDATE email SET send_after = now() - interval '1 minute' WHERE id = ?`, [id]);
    await deliver(id);
    expect(arrived('canceled')).toBe(0);
    expect((await resend.emails.cancel(id)).error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  it('refuses a time too far ahead or malformed', async () => {
    const far = await app.request('POST', '/emails', {
      token: app.token,
      body: {
        from: 'a@acme.test',
        to: 'b@example.com',
        subject: 's',
        text: 't',
        scheduled_at: new Date(Date.now() + 31 * 86_400_000).toISOString(),
      },
    });
    expect(far.status).toBe(422);
    expect(far.body.message).toBe('scheduled_at: must be at most 30 days ahead');
    const bad = await app.request('POST', '/emails', {
      token: app.token,
      body: { from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't', scheduled_at: 'whenever you like' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/^scheduled_at: must be an ISO 8601/);
  });

  it('takes a phrase, as Resend does', async () => {
    const before = Date.now();
    const id = await schedule('phrased', 'in 1 hour');
    const at = new Date((await get(id)).scheduled_at!).getTime();
    expect(at).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000);
  });

  it('DELETE removes an email with what was kept for it; one not sent yet never goes out', async () => {
    const id = await schedule('deleted before sending');
    const sql = (text: string) => app.deps.orm.em.fork().getConnection().execute(text, [id]);
    // No foreign key cascades these any more (the tables are partitioned by day): deleteEmail removes them.
    await sql(`INSERT INTO email_tracking (email_id) VALUES (?)`);
    await sql(
      `INSERT INTO tracking_click (id, created_at, email_id, link, clicked_at, outcome) VALUES (gen_random_uuid(), now(), ?, 'https://example.com', now(), 'clicked')`,
    );
    const kept = () =>
      sql(`SELECT count(*) AS n FROM (SELECT email_id FROM email_recipient UNION ALL SELECT email_id FROM email_attachment UNION ALL SELECT email_id FROM event
             UNION ALL SELECT email_id FROM email_tracking UNION ALL SELECT email_id FROM tracking_click) kept WHERE email_id = ?`);
    expect(Number((await kept())[0]!.n)).toBeGreaterThanOrEqual(3);
    const res = await app.request('DELETE', `/emails/${id}`, { token: app.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'email', id, deleted: true });
    expect((await app.request('GET', `/emails/${id}`, { token: app.token })).status).toBe(404);
    expect(Number((await kept())[0]!.n)).toBe(0);
    await deliver(id);
    expect(arrived('deleted before sending')).toBe(0);
    expect((await app.request('DELETE', `/emails/${id}`, { token: app.token })).status).toBe(404);
  });

  it("answers another team's email with 404 on update and cancel", async () => {
    const id = await schedule('foreign');
    const other = await app.createTeamWithKey();
    const patch = await app.request('PATCH', `/emails/${id}`, {
      token: other.token,
      body: { scheduled_at: inOneHour() },
    });
    const cancel = await app.request('POST', `/emails/${id}/cancel`, { token: other.token });
    expect([patch.status, cancel.status]).toEqual([404, 404]);
    expect((await get(id)).last_event).toBe('scheduled');
  });
});
