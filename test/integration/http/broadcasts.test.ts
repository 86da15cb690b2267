import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBroadcast } from '../../../server/services/broadcasts/run-broadcast.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { readPreferenceToken } from '../../../server/services/preferences/preference-token.js';
import { CLOCK_INSTANTS, utcMidnightAfter } from '../../support/clock-instants.js';
import { queryDatabase } from '../../support/db.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { startTestApp, type TestApp, useTestApp } from '../../support/test-app.js';

const query = <T extends pg.QueryResultRow>(target: TestApp, sql: string, params: unknown[] = []) =>
  queryDatabase<T>(target.databaseUrl, sql, params);

/** A segment of `count` generated contacts, written in one statement (the API path is tested elsewhere). */
const bulkSegment = async (target: TestApp, auth: { token: string; teamId: string }, count: number, prefix: string) => {
  const segment = await target.request('POST', '/segments', { token: auth.token, body: { name: prefix } });
  await query(
    target,
    `WITH c AS (
       INSERT INTO contact (id, created_at, updated_at, team_id, email, unsubscribed, properties)
       SELECT gen_random_uuid(), now(), now(), $1, $2 || g || '@example.com', false, '{}' FROM generate_series(1, $3) g RETURNING id)
     INSERT INTO segment_member (segment_id, contact_id, created_at) SELECT $4, id, now() FROM c`,
    [auth.teamId, prefix, count, segment.body.id],
  );
  return segment.body.id as string;
};

const run = (id: string) => app.run(() => runBroadcast(app.deps, id));

const app = useTestApp();

describe('broadcast drafts', () => {
  it('creates, reads, lists, changes, duplicates and deletes a draft', async () => {
    const segment = await app.request('POST', '/segments', { token: app.token, body: { name: 'Drafts' } });
    const created = await app.request('POST', '/broadcasts', {
      token: app.token,
      body: {
        name: 'Launch',
        audience_id: segment.body.id,
        from: 'Acme <news@acme.test>',
        subject: 'Hello',
        html: '<p>Hi</p>',
        reply_to: 'help@acme.test',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ object: 'broadcast', id: created.body.id, finishes_at: null, estimated: true });
    const id = created.body.id;

    const read = await app.request('GET', `/broadcasts/${id}`, { token: app.token });
    expect(read.body).toMatchObject({
      object: 'broadcast',
      id,
      name: 'Launch',
      segment_id: segment.body.id,
      audience_id: segment.body.id,
      status: 'draft',
      from: 'Acme <news@acme.test>',
      subject: 'Hello',
      reply_to: ['help@acme.test'],
      html: '<p>Hi</p>',
      text: null,
      sent_count: 0,
      finishes_at: null,
      scheduled_at: null,
      sent_at: null,
    });
    expect(
      (
        await app.request('PATCH', `/broadcasts/${id}`, {
          token: app.token,
          body: { subject: 'Hello again', preview_text: 'Inside' },
        })
      ).body,
    ).toEqual({ object: 'broadcast', id });
    expect((await app.request('GET', `/broadcasts/${id}`, { token: app.token })).body).toMatchObject({
      subject: 'Hello again',
      preview_text: 'Inside',
    });

    const list = await app.request('GET', '/broadcasts', { token: app.token });
    expect(list.body.object).toBe('list');
    expect(list.body.data[0]).toMatchObject({ id, status: 'draft', sent_count: 0, finishes_at: null });
    expect(list.body.data[0].html).toBeUndefined();

    const copy = await app.request('POST', `/broadcasts/${id}/duplicate`, { token: app.token });
    expect(copy.status).toBe(200);
    expect((await app.request('GET', `/broadcasts/${copy.body.id}`, { token: app.token })).body).toMatchObject({
      name: 'Launch (copy)',
      subject: 'Hello again',
      status: 'draft',
    });

    expect((await app.request('DELETE', `/broadcasts/${id}`, { token: app.token })).body).toEqual({
      object: 'broadcast',
      id,
      deleted: true,
    });
    expect((await app.request('GET', `/broadcasts/${id}`, { token: app.token })).status).toBe(404);
  });

  it('refuses bad input with a clear 4xx, and another team sees nothing', async () => {
    const segment = await app.request('POST', '/segments', { token: app.token, body: { name: 'Checks' } });
    const missing = await app.request('POST', '/broadcasts', {
      token: app.token,
      body: { from: 'a@acme.test', subject: 'x', html: 'x' },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.message).toMatch(/segment_id/);
    const other = await app.createTeamWithKey();
    const foreignSegment = await app.request('POST', '/broadcasts', {
      token: other.token,
      body: { segment_id: segment.body.id, from: 'a@acme.test', subject: 'x', html: 'x' },
    });
    expect(foreignSegment.status).toBe(422);
    expect(foreignSegment.body.message).toMatch(/segment_id: no segment/);
    const badFrom = await app.request('POST', '/broadcasts', {
      token: app.token,
      body: { segment_id: segment.body.id, from: 'not an address', subject: 'x' },
    });
    expect(badFrom.status).toBe(422);
    const scheduledDraft = await app.request('POST', '/broadcasts', {
      token: app.token,
      body: { segment_id: segment.body.id, from: 'a@acme.test', subject: 'x', scheduled_at: 'in 1 hour' },
    });
    expect(scheduledDraft.status).toBe(422);

    const mine = await app.request('POST', '/broadcasts', {
      token: app.token,
      body: { segment_id: segment.body.id, from: 'a@acme.test', subject: 'x' },
    });
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/send'],
      ['POST', '/cancel'],
      ['POST', '/duplicate'],
    ] as const) {
      const res = await app.request(method, `/broadcasts/${mine.body.id}${path}`, {
        token: other.token,
        body: method === 'PATCH' ? { name: 'x' } : path === '/send' ? {} : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    // No body to send, and placeholders no contact can fill, are refused at send; the draft stays a draft.
    expect(
      (await app.request('POST', `/broadcasts/${mine.body.id}/send`, { token: app.token, body: {} })).body.name,
    ).toBe('missing_required_field');
    await app.request('PATCH', `/broadcasts/${mine.body.id}`, {
      token: app.token,
      body: { html: '<p>{{{NICKNAME}}}</p>' },
    });
    const unknown = await app.request('POST', `/broadcasts/${mine.body.id}/send`, { token: app.token, body: {} });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toMatch(/NICKNAME/);
    expect((await app.request('GET', `/broadcasts/${mine.body.id}`, { token: app.token })).body.status).toBe('draft');
  });
});

describe('sending a broadcast', () => {
  it('writes one normal email per reachable contact, skipping and counting the rest, and is sent only once every email is', async () => {
    const topic = await app.request('POST', '/topics', {
      token: app.token,
      body: { name: 'News', default_subscription: 'opt_in' },
    });
    await app.request('POST', '/contact-properties', {
      token: app.token,
      body: { key: 'plan', type: 'string', fallback_value: 'free' },
    });
    const segment = await app.request('POST', '/segments', { token: app.token, body: { name: 'Everyone' } });
    const contact = (email: string, extra: Record<string, unknown> = {}) =>
      app.request('POST', '/contacts', { token: app.token, body: { email, segments: [segment.body.id], ...extra } });
    await contact('ann@example.com', { first_name: 'Ann', properties: { plan: 'pro' } });
    await contact('bob@example.com');
    await contact('gone@example.com', { unsubscribed: true });
    await contact('bounced@example.com');
    await contact('quiet@example.com', { topics: [{ id: topic.body.id, subscription: 'opt_out' }] });
    await app.request('POST', '/suppressions', { token: app.token, body: { email: 'bounced@example.com' } });

    const created = await app.request('POST', '/broadcasts', {
      token: app.token,
      body: {
        segment_id: segment.body.id,
        topic_id: topic.body.id,
        from: 'Acme <news@acme.test>',
        subject: 'Hi {{{FIRST_NAME|there}}}',
        send: true,
        html: '<p>Hi {{{FIRST_NAME|there}}} on {{{plan}}}</p><a href="{{{UNSUBSCRIBE_URL}}}">x</a>',
        text: 'Leave: {{{ALT_UNSUBSCRIBE_URL}}}',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'broadcast', estimated: true });
    expect(Date.parse(created.body.finishes_at)).toBeGreaterThan(0);
    expect(created.body.warning).toBeUndefined();
    const id = created.body.id;
    expect(app.recorded.at(-1)).toMatchObject({ name: 'broadcast.send', data: { broadcastId: id } });

    await run(id);
    const emails = await query<{
      id: string;
      to: string[];
      subject: string;
      html: string;
      text: string;
      headers: Record<string, string>;
    }>(app, 'SELECT id, "to", subject, html, text, headers FROM email WHERE broadcast_id = $1 ORDER BY "to"', [id]);
    expect(emails.map((e) => e.to[0])).toEqual(['ann@example.com', 'bob@example.com']);
    expect(emails.map((e) => e.subject)).toEqual(['Hi Ann', 'Hi there']);
    expect(emails[0]!.html).toContain('Hi Ann on pro');
    expect(emails[1]!.html).toContain('Hi there on free');
    for (const email of emails) {
      const link = /href="([^"]+)"/.exec(email.html)![1]!;
      const subject = readPreferenceToken(app.deps.secrets, link.split('/preferences/')[1]!);
      expect(subject).toEqual({ teamId: app.teamId, email: email.to[0], topicId: topic.body.id });
      expect(email.text).toBe(`Leave: ${link}`);
      expect(email.headers['List-Unsubscribe']).toMatch(/\/unsubscribe\//);
    }
    // Each copy is a normal email.
    expect((await app.request('GET', `/emails/${emails[0]!.id}`, { token: app.token })).body).toMatchObject({
      id: emails[0]!.id,
      to: ['ann@example.com'],
      last_event: 'queued',
    });

    // Emails still queued: the broadcast is not finished, however often it is worked.
    await run(id);
    let read = await app.request('GET', `/broadcasts/${id}`, { token: app.token });
    expect(read.body).toMatchObject({ status: 'sending', sent_count: 0, skipped_count: 3, audience_size: 5 });
    expect(read.body.finishes_at).not.toBeNull();

    await query(app, `UPDATE email SET status = 'sent', last_event = 'sent' WHERE broadcast_id = $1`, [id]);
    await run(id);
    read = await app.request('GET', `/broadcasts/${id}`, { token: app.token });
    expect(read.body).toMatchObject({ status: 'sent', sent_count: 2 });
    expect((await app.request('POST', `/broadcasts/${id}/cancel`, { token: app.token })).status).toBe(409);
    expect((await app.request('PATCH', `/broadcasts/${id}`, { token: app.token, body: { name: 'x' } })).status).toBe(
      409,
    );
  });

  it('walks a large segment in batches, each contact once', async () => {
    const auth = await app.createTeamWithKey();
    const segmentId = await bulkSegment(app, auth, 2_345, 'walk');
    const created = await app.request('POST', '/broadcasts', {
      token: auth.token,
      body: { segment_id: segmentId, from: 'a@acme.test', subject: 's', text: 'Hi {{{EMAIL}}}', send: true },
    });
    await run(created.body.id);
    const [counts] = await query<{ n: number; distinct_to: number }>(
      app,
      'SELECT count(*)::int AS n, count(DISTINCT "to"[1])::int AS distinct_to FROM email WHERE broadcast_id = $1',
      [created.body.id],
    );
    expect(counts).toEqual({ n: 2_345, distinct_to: 2_345 });
    const [state] = await query<{ expanded_count: number; expanded: boolean }>(
      app,
      'SELECT expanded_count, expanded FROM broadcast WHERE id = $1',
      [created.body.id],
    );
    expect(state).toEqual({ expanded_count: 2_345, expanded: true });
  });

  it('cancels: a scheduled broadcast writes nothing, a sending one cancels its waiting emails', async () => {
    const auth = await app.createTeamWithKey();
    const segmentId = await bulkSegment(app, auth, 30, 'cancel');
    const body = { segment_id: segmentId, from: 'a@acme.test', subject: 's', text: 'x' };
    const scheduled = await app.request('POST', '/broadcasts', {
      token: auth.token,
      body: { ...body, send: true, scheduled_at: 'in 2 hours' },
    });
    expect((await app.request('GET', `/broadcasts/${scheduled.body.id}`, { token: auth.token })).body.status).toBe(
      'scheduled',
    );
    const canceled = await app.request('POST', `/broadcasts/${scheduled.body.id}/cancel`, { token: auth.token });
    expect(canceled.body).toEqual({ object: 'broadcast', id: scheduled.body.id, canceled_remaining: 30 });
    await run(scheduled.body.id);
    expect((await app.request('GET', `/broadcasts/${scheduled.body.id}`, { token: auth.token })).body).toMatchObject({
      status: 'canceled',
      finishes_at: null,
    });
    expect(await query(app, 'SELECT 1 FROM email WHERE broadcast_id = $1', [scheduled.body.id])).toHaveLength(0);

    const draft = await app.request('POST', '/broadcasts', { token: auth.token, body });
    // Two sends at once: the row lock lets exactly one through.
    const both = await Promise.all(
      [1, 2].map(() => app.request('POST', `/broadcasts/${draft.body.id}/send`, { token: auth.token, body: {} })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const sent = both.find((r) => r.status === 200)!;
    expect(sent.body).toMatchObject({ id: draft.body.id, estimated: true });
    await run(draft.body.id);
    await query(
      app,
      `UPDATE email SET status = 'sent' WHERE id IN (SELECT id FROM email WHERE broadcast_id = $1 LIMIT 10)`,
      [draft.body.id],
    );
    const mid = await app.request('POST', `/broadcasts/${draft.body.id}/cancel`, { token: auth.token });
    expect(mid.body.canceled_remaining).toBe(20);
    const statuses = await query<{ status: string; n: number }>(
      app,
      'SELECT status, count(*)::int AS n FROM email WHERE broadcast_id = $1 GROUP BY 1 ORDER BY 1',
      [draft.body.id],
    );
    expect(statuses).toEqual([
      { status: 'canceled', n: 20 },
      { status: 'sent', n: 10 },
    ]);
    expect(
      (await app.request('POST', `/broadcasts/${draft.body.id}/send`, { token: auth.token, body: {} })).status,
    ).toBe(409);
  });
});

describe('capacity and estimates', () => {
  // One email a second in the region, and a daily plan of 2 emails.
  const slow = useTestApp({
    env: {
      POSTLANE_PROVIDERS: JSON.stringify([{ type: 'capture', regions: ['us-east-1'], rate_per_second: 1 }]),
      POSTLANE_CLOUD: 'true',
      POSTLANE_RATE_LIMIT: '0',
      POSTLANE_PLANS: JSON.stringify({
        free: { quota: 'daily', emails_per_day: 2, domains: 1, contacts: 100_000 },
        pro: { quota: 'monthly', emails_per_month: 1_000_000, overage_usd_per_1k: 1, domains: 1, contacts: null },
        scale: { quota: 'monthly', emails_per_month: 2, overage_usd_per_1k: 1, domains: 1, contacts: null },
      }),
    },
  });
  // A test on an injected clock leaves no broadcast queued: at another instant it would sit "ahead" of the next one.
  let clockedTeam: string | null = null;
  afterEach(async () => {
    slow.deps.clock = () => new Date();
    if (clockedTeam) await query(slow, 'DELETE FROM broadcast WHERE team_id = $1', [clockedTeam]);
    clockedTeam = null;
  });

  const onPlan = async (plan: 'free' | 'pro' | 'scale') => {
    const auth = await slow.createTeamWithKey();
    await query(slow, 'UPDATE team SET plan = $1 WHERE id = $2', [plan, auth.teamId]);
    return auth;
  };
  const send = (auth: { token: string }, segmentId: string) =>
    slow.request('POST', '/broadcasts', {
      token: auth.token,
      body: { segment_id: segmentId, from: 'a@acme.test', subject: 's', text: 'x', send: true },
    });

  // The estimate counts in UTC days: at each instant, on the app's injected clock (CLOCK_INSTANTS).
  it.each(CLOCK_INSTANTS)(
    'at %j: answers with an estimate, paced by the quota, and refuses more than 24 days with 422 broadcast_too_large',
    async (now) => {
      slow.deps.clock = () => now;
      const auth = await onPlan('free');
      clockedTeam = auth.teamId;
      const fits = await send(auth, await bulkSegment(slow, auth, 3, 'fits'));
      expect(fits.status).toBe(201);
      expect(fits.body.warning).toBeUndefined();
      expect(Date.parse(fits.body.finishes_at) - now.getTime()).toBeLessThan(10_000);

      // 7 at 2 a day: 3 today (150 %), 2 tomorrow, and the last 2 at 1 a second from the day after's midnight.
      const paced = await send(auth, await bulkSegment(slow, auth, 7, 'paced'));
      expect(paced.status).toBe(201);
      const finishesAt = new Date(utcMidnightAfter(now, 2).getTime() + 2_000);
      expect(paced.body.finishes_at).toBe(finishesAt.toISOString());
      const days = Math.round(((finishesAt.getTime() - now.getTime()) / 86_400_000) * 10) / 10;
      expect(paced.body.warning).toMatchObject({ code: 'paced', days });
      expect(paced.body.warning.days).toBeGreaterThanOrEqual(1);
      expect(paced.body.warning.message).toMatch(/days/);

      const tooLarge = await send(auth, await bulkSegment(slow, auth, 60, 'large'));
      expect(tooLarge.status).toBe(422);
      expect(tooLarge.body).toMatchObject({ statusCode: 422, name: 'broadcast_too_large' });
      // Refused, nothing is left behind.
      expect(
        await query(slow, `SELECT 1 FROM broadcast WHERE team_id = $1 AND status <> 'queued'`, [auth.teamId]),
      ).toHaveLength(0);
    },
  );

  it('warns queued_behind when broadcasts ahead in the region take the capacity', async () => {
    const first = await onPlan('pro');
    const ahead = await send(first, await bulkSegment(slow, first, 7_300, 'ahead'));
    expect(ahead.body.warning).toMatchObject({ code: 'paced' });
    const second = await onPlan('pro');
    const behind = await send(second, await bulkSegment(slow, second, 3, 'behind'));
    expect(behind.status).toBe(201);
    expect(behind.body.warning).toMatchObject({ code: 'queued_behind' });
    expect(Date.parse(behind.body.finishes_at)).toBeGreaterThan(Date.parse(ahead.body.finishes_at));
  });

  it.each(CLOCK_INSTANTS)(
    'at %j: parks a broadcast past a monthly quota without overage until renewal, rather than refusing it',
    async (now) => {
      slow.deps.clock = () => now;
      const auth = await onPlan('scale');
      clockedTeam = auth.teamId;
      const segmentId = await bulkSegment(slow, auth, 5, 'renewal');
      const draft = await slow.request('POST', '/broadcasts', {
        token: auth.token,
        body: { segment_id: segmentId, from: 'a@acme.test', subject: 's', text: 'x' },
      });
      // Straight to the queue: whether the estimate accepts a wait until renewal depends on the date.
      await query(
        slow,
        `UPDATE broadcast SET status = 'queued', audience_size = 5, sent_at = now() - interval '1 hour' WHERE id = $1`,
        [draft.body.id],
      );
      await slow.run(() => runBroadcast(slow.deps, draft.body.id));
      const [row] = await query<{ status: string; next_batch_at: Date; expanded_count: number }>(
        slow,
        'SELECT status, next_batch_at, expanded_count FROM broadcast WHERE id = $1',
        [draft.body.id],
      );
      expect(row).toEqual({
        status: 'queued',
        expanded_count: 0,
        next_batch_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
      });
      expect(await query(slow, 'SELECT 1 FROM email WHERE broadcast_id = $1', [draft.body.id])).toHaveLength(0);
    },
  );
});

describe('provider throttling', () => {
  it('halves the pace and holds further batches while emails wait to retry, then picks up again', async () => {
    const reject = new Map<string, number>();
    const sink = await startSmtpSink({ reject });
    // Four emails a second and batches of 200: each batch is 50 s of sending, so one run writes one batch.
    const throttled = await startTestApp({
      env: {
        POSTLANE_PROVIDERS: JSON.stringify([
          { type: 'smtp', url: sink.url, regions: ['us-east-1'], rate_per_second: 4 },
        ]),
        POSTLANE_BROADCAST_BATCH_SIZE: '200',
      },
    });
    try {
      // A relay sends from verified domains only (docs/domains.md).
      const auth = await throttled.createTeamWithKey('full_access', { verifiedDomains: ['acme.test'] });
      const segmentId = await bulkSegment(throttled, auth, 600, 'throttle');
      const created = await throttled.request('POST', '/broadcasts', {
        token: auth.token,
        body: { segment_id: segmentId, from: 'a@acme.test', subject: 's', text: 'x', send: true },
      });
      const id = created.body.id;
      const work = () => throttled.run(() => runBroadcast(throttled.deps, id));
      const state = async () =>
        (
          await query<{ status: string; expanded_count: number; pace_per_second: number; next_batch_at: Date }>(
            throttled,
            'SELECT status, expanded_count, pace_per_second, next_batch_at FROM broadcast WHERE id = $1',
            [id],
          )
        )[0]!;
      await work();
      expect(await state()).toMatchObject({ status: 'sending', expanded_count: 200, pace_per_second: 4 });

      // The provider answers 451 (try again later) for the first email.
      const [first] = await query<{ id: string; to: string[] }>(
        throttled,
        'SELECT id, "to" FROM email WHERE broadcast_id = $1 ORDER BY send_after LIMIT 1',
        [id],
      );
      reject.set(first!.to[0]!, 451);
      await throttled.run(() => deliverDue(throttled.deps, 'us-east-1', [first!.id]));
      expect(
        (
          await query<{ status: string; attempts: number }>(
            throttled,
            'SELECT status, attempts FROM email WHERE id = $1',
            [first!.id],
          )
        )[0],
      ).toEqual({ status: 'queued', attempts: 1 });

      await query(throttled, 'UPDATE broadcast SET next_batch_at = now() WHERE id = $1', [id]);
      await work();
      const slowed = await state();
      expect(slowed).toMatchObject({ status: 'sending', expanded_count: 200, pace_per_second: 2 });
      expect(slowed.next_batch_at.getTime() - Date.now()).toBeGreaterThan(50_000);

      // The retry goes through: the walk resumes, speeding up again.
      reject.clear();
      await query(throttled, 'UPDATE email SET send_after = now() WHERE id = $1', [first!.id]);
      await throttled.run(() => deliverDue(throttled.deps, 'us-east-1', [first!.id]));
      await query(throttled, 'UPDATE broadcast SET next_batch_at = now() WHERE id = $1', [id]);
      await work();
      expect(await state()).toMatchObject({ status: 'sending', expanded_count: 400, pace_per_second: 3 });

      // An email whose worker died holding it is back in the queue untried, with no error from the
      // provider: that is no pushback, and the walk goes on at full pace.
      await query(
        throttled,
        `UPDATE email SET attempts = 1 WHERE id = (SELECT id FROM email WHERE broadcast_id = $1 AND status = 'queued' LIMIT 1)`,
        [id],
      );
      await query(throttled, 'UPDATE broadcast SET next_batch_at = now() WHERE id = $1', [id]);
      await work();
      expect(await state()).toMatchObject({ status: 'sending', expanded_count: 600, pace_per_second: 4 });
    } finally {
      await throttled.close();
      await sink.close();
    }
  });
});

describe('the from rule and the region', () => {
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(() => sink.close());
  const regions = useTestApp(() => ({
    env: {
      // The default region relays (verified domains only); two capture regions at different rates.
      POSTLANE_PROVIDERS: JSON.stringify([
        { type: 'smtp', url: sink.url, regions: ['eu-west-1'] },
        { type: 'capture', regions: ['us-east-1'], rate_per_second: 50 },
        { type: 'capture', regions: ['ap-northeast-1'], rate_per_second: 1 },
      ]),
      POSTLANE_DEFAULT_REGION: 'eu-west-1',
      POSTLANE_AUTH_CACHE_SECONDS: '0',
      // Batches larger than a write slice (250): pacing runs on across the slices of a batch.
      POSTLANE_BROADCAST_BATCH_SIZE: '300',
    },
  }));

  const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}.test`;
  const addDomain = async (auth: { token: string }, region?: string) => {
    const created = await regions.request('POST', '/domains', {
      token: auth.token,
      body: { name: unique('shop'), ...(region ? { region } : {}) },
    });
    expect(created.status).toBe(201);
    return created.body as { id: string; name: string };
  };
  const setStatus = (domainId: string, status: string) =>
    query(regions, 'UPDATE domain SET status = $1 WHERE id = $2', [status, domainId]);
  /** What POST /emails answers for the same `from`: broadcasts refuse with the same status, name and message. */
  const emailRefusal = async (auth: { token: string }, from: string) => {
    const refused = await regions.request('POST', '/emails', {
      token: auth.token,
      body: { from, to: 'reader@example.com', subject: 's', text: 'x' },
    });
    expect(refused.status).toBe(403);
    return refused;
  };
  const regionOf = async (id: string) =>
    (await query<{ region: string }>(regions, 'SELECT region FROM broadcast WHERE id = $1', [id]))[0]!.region;

  it('refuses a from the team may not send from, as POST /emails does, at create, at update and again at send', async () => {
    const auth = await regions.createTeamWithKey();
    const segmentId = await bulkSegment(regions, auth, 3, 'rule');
    const body = { segment_id: segmentId, subject: 's', text: 'x' };

    // A domain the team never added, and one added but not verified, in a region that relays.
    for (const from of ['news@never-added.test', `news@${(await addDomain(auth)).name}`]) {
      const refused = await regions.request('POST', '/broadcasts', {
        token: auth.token,
        body: { ...body, from, send: true },
      });
      const expected = await emailRefusal(auth, from);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(expected.body);
    }
    expect(await query(regions, 'SELECT 1 FROM broadcast WHERE team_id = $1', [auth.teamId])).toHaveLength(0);

    const domain = await addDomain(auth);
    await setStatus(domain.id, 'verified');
    const draft = await regions.request('POST', '/broadcasts', {
      token: auth.token,
      body: { ...body, from: `News <news@${domain.name}>` },
    });
    expect(draft.status).toBe(201);
    expect(await regionOf(draft.body.id)).toBe('eu-west-1');
    const patched = await regions.request('PATCH', `/broadcasts/${draft.body.id}`, {
      token: auth.token,
      body: { from: 'news@never-added.test' },
    });
    expect(patched.status).toBe(403);
    expect(patched.body).toEqual((await emailRefusal(auth, 'news@never-added.test')).body);
    expect((await regions.request('GET', `/broadcasts/${draft.body.id}`, { token: auth.token })).body.from).toBe(
      `News <news@${domain.name}>`,
    );

    // The domain loses its verification before the send: the send is refused and the broadcast stays a draft.
    await setStatus(domain.id, 'partially_verified');
    const send = await regions.request('POST', `/broadcasts/${draft.body.id}/send`, { token: auth.token, body: {} });
    expect(send.status).toBe(403);
    expect(send.body).toEqual((await emailRefusal(auth, `news@${domain.name}`)).body);
    expect((await regions.request('GET', `/broadcasts/${draft.body.id}`, { token: auth.token })).body.status).toBe(
      'draft',
    );
    await setStatus(domain.id, 'verified');
    expect(
      (await regions.request('POST', `/broadcasts/${draft.body.id}/send`, { token: auth.token, body: {} })).status,
    ).toBe(200);
  });

  it('stops a running broadcast whose domain is removed: nothing more is written and its waiting emails are canceled', async () => {
    const auth = await regions.createTeamWithKey();
    const domain = await addDomain(auth, 'ap-northeast-1');
    // One email a second and batches of 300: a run writes one batch (300 s of sending) of the 400.
    const segmentId = await bulkSegment(regions, auth, 400, 'removed');
    const created = await regions.request('POST', '/broadcasts', {
      token: auth.token,
      body: { segment_id: segmentId, from: `news@${domain.name}`, subject: 's', text: 'x', send: true },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await regions.run(() => runBroadcast(regions.deps, id));
    const state = async () =>
      (
        await query<{ status: string; expanded_count: number }>(
          regions,
          'SELECT status, expanded_count FROM broadcast WHERE id = $1',
          [id],
        )
      )[0]!;
    expect(await state()).toEqual({ status: 'sending', expanded_count: 300 });
    await query(
      regions,
      `UPDATE email SET status = 'sent' WHERE id IN (SELECT id FROM email WHERE broadcast_id = $1 ORDER BY send_after LIMIT 5)`,
      [id],
    );

    expect((await regions.request('DELETE', `/domains/${domain.id}`, { token: auth.token })).status).toBe(200);
    await regions.run(() => runBroadcast(regions.deps, id));
    expect(await state()).toEqual({ status: 'canceled', expanded_count: 300 });
    const statuses = await query<{ status: string; n: number }>(
      regions,
      'SELECT status, count(*)::int AS n FROM email WHERE broadcast_id = $1 GROUP BY 1 ORDER BY 1',
      [id],
    );
    expect(statuses).toEqual([
      { status: 'canceled', n: 295 },
      { status: 'sent', n: 5 },
    ]);
    expect((await regions.request('GET', `/broadcasts/${id}`, { token: auth.token })).body).toMatchObject({
      status: 'canceled',
      finishes_at: null,
    });
  });

  it("sends each email in the from domain's region, estimated at that region's rate behind that region's broadcasts only", async () => {
    const auth = await regions.createTeamWithKey();
    // Capture regions send without verification (the sandbox rule): these domains stay pending.
    const slowDomain = await addDomain(auth, 'ap-northeast-1');
    const fastDomain = await addDomain(auth, 'us-east-1');
    const send = async (domainName: string, count: number) => {
      const sent = await regions.request('POST', '/broadcasts', {
        token: auth.token,
        body: {
          segment_id: await bulkSegment(regions, auth, count, unique('region')),
          from: `news@${domainName}`,
          subject: 's',
          text: 'Hi {{{EMAIL}}}',
          send: true,
        },
      });
      expect(sent.status).toBe(201);
      return sent.body as { id: string; finishes_at: string; warning?: { code: string } };
    };

    // 7,300 contacts: two hours at one a second, under three minutes at fifty.
    const slow = await send(slowDomain.name, 7_300);
    expect(slow.warning).toMatchObject({ code: 'paced' });
    expect(await regionOf(slow.id)).toBe('ap-northeast-1');
    const fast = await send(fastDomain.name, 7_300);
    expect(fast.warning).toBeUndefined();
    expect(await regionOf(fast.id)).toBe('us-east-1');

    // Only the broadcasts ahead in the same region delay a new one.
    const behindSlow = await send(slowDomain.name, 3);
    expect(behindSlow.warning).toMatchObject({ code: 'queued_behind' });
    expect(Date.parse(behindSlow.finishes_at)).toBeGreaterThan(Date.parse(slow.finishes_at));
    const behindFast = await send(fastDomain.name, 3);
    expect(behindFast.warning).toBeUndefined();
    expect(Date.parse(behindFast.finishes_at)).toBeLessThan(Date.parse(behindSlow.finishes_at));

    // Every email carries the broadcast's region, and is paced at that region's rate.
    await regions.run(() => runBroadcast(regions.deps, slow.id));
    await regions.run(() => runBroadcast(regions.deps, fast.id));
    const emails = await query<{ broadcast_id: string; region: string; n: number; span: number }>(
      regions,
      `SELECT broadcast_id, region, count(*)::int AS n, extract(epoch FROM max(send_after) - min(send_after))::float AS span
         FROM email WHERE broadcast_id = ANY($1::uuid[]) GROUP BY 1, 2`,
      [[slow.id, fast.id]],
    );
    const slowEmails = emails.find((e) => e.broadcast_id === slow.id)!;
    const fastEmails = emails.find((e) => e.broadcast_id === fast.id)!;
    expect(emails).toHaveLength(2);
    expect(slowEmails.region).toBe('ap-northeast-1');
    expect(fastEmails.region).toBe('us-east-1');
    // One a second: as many seconds apart as emails, across the batch's write slices; fifty a second: fifty times closer together.
    expect(slowEmails.n).toBe(300);
    expect(slowEmails.span).toBeGreaterThanOrEqual(slowEmails.n - 2);
    expect(fastEmails.span).toBeLessThan(fastEmails.n / 10);
  });
});
