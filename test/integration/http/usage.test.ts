import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Email, Event, Team } from '../../../server/entities/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { drainEndpoint } from '../../../server/services/webhooks/drain-endpoint.js';
import { useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver } from '../../support/webhook-receiver.js';

const mail = (to = 'user@example.com') => ({ from: 'a@acme.test', to, subject: 'Hi', text: 'Hi' });
const PLANS = JSON.stringify({
  free: { quota: 'daily', emails_per_day: 4, domains: 1, contacts: 2 },
  pro: { quota: 'monthly', emails_per_month: 5, overage_usd_per_1k: 0.9, domains: null, contacts: null },
});

describe('self-hosted', () => {
  const app = useTestApp();

  it('reports no plan, counts accepted mail today, and sends no rate-limit headers', async () => {
    const { token } = await app.createTeamWithKey();
    await app.request('POST', '/emails', { token, body: mail() });
    await app.request('POST', '/emails/batch', { token, body: [mail(), mail(), mail()] });
    const usage = await app.request('GET', '/usage', { token });
    expect(usage.body).toEqual({
      object: 'usage',
      plan: null,
      limits: null,
      cloud: false,
      accepted_today: 4,
      period: null,
    });
    expect(usage.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('cloud plans', () => {
  let now = new Date('2026-11-22T10:00:00Z');
  const app = useTestApp({
    env: {
      POSTLANE_CLOUD: 'true',
      POSTLANE_RATE_LIMIT: '0',
      POSTLANE_PLANS: PLANS,
      POSTLANE_PUBLIC_URL: 'https://mail.example.com',
      POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    },
  });
  beforeAll(() => {
    app.deps.clock = () => now;
  });

  const onPlan = async (plan: 'free' | 'pro', overageEnabled = false) => {
    const team = await app.createTeamWithKey();
    await app.run(() => app.deps.orm.em.nativeUpdate(Team, team.teamId, { plan, overageEnabled }));
    const events = async () =>
      (
        await app.run(() =>
          app.deps.orm.em.find(
            Event,
            { team: team.teamId, type: { $like: 'quota.%' } },
            { orderBy: { createdAt: 'asc', type: 'desc' } },
          ),
        )
      ).map((e) => [e.type, e.payload]);
    const sendAfter = async (id: string) =>
      (await app.run(() => app.deps.orm.em.findOneOrFail(Email, id))).sendAfter.toISOString();
    return { ...team, events, sendAfter };
  };

  it('a daily plan sends up to 150% of its cap, parks the next day’s worth until midnight UTC, then answers 429', async () => {
    now = new Date('2026-11-22T10:00:00Z');
    const { token, events, sendAfter } = await onPlan('free');
    for (let i = 0; i < 6; i += 1) {
      const sent = await app.request('POST', '/emails', { token, body: mail() });
      expect(sent.status).toBe(200);
      expect(new Date(await sendAfter(sent.body.id)).getTime()).toBeLessThanOrEqual(now.getTime());
    }
    const parked = await app.request('POST', '/emails/batch', { token, body: [mail(), mail(), mail()] });
    expect(parked.status).toBe(200);
    for (const { id } of parked.body.data) expect(await sendAfter(id)).toBe('2026-11-23T00:00:00.000Z');
    // The backlog holds 4: a batch of 2 no longer fits and is refused whole.
    const full = await app.request('POST', '/emails/batch', { token, body: [mail(), mail()] });
    expect(full.status).toBe(429);
    expect(full.body).toEqual({
      statusCode: 429,
      name: 'daily_quota_exceeded',
      message: expect.stringContaining('midnight UTC'),
    });
    expect(full.headers.get('retry-after')).toBe(String(14 * 3600));
    expect((await app.request('POST', '/emails', { token, body: mail() })).status).toBe(200);
    expect((await app.request('POST', '/emails', { token, body: mail() })).status).toBe(429);

    const usage = await app.request('GET', '/usage', { token });
    expect(usage.body).toEqual({
      object: 'usage',
      plan: 'free',
      cloud: true,
      accepted_today: 6,
      period: null,
      limits: { emails_per_day: 4, domains: 1, contacts: 2 },
    });
    const data = (used: number, resets = '2026-11-23T00:00:00.000Z') => ({
      used,
      limit: 4,
      period: 'day',
      resets_at: resets,
      dashboard_url: 'https://mail.example.com',
      ceiling: 6,
    });
    expect(await events()).toEqual([
      ['quota.warning', data(4)],
      ['quota.reached', data(4)],
      ['quota.paused', data(6)],
      // The parked mail starts the next day at its quota: that day's lines, stamped its midnight.
      ['quota.warning', data(4, '2026-11-24T00:00:00.000Z')],
      ['quota.reached', data(4, '2026-11-24T00:00:00.000Z')],
    ]);

    // The next UTC day starts with the released mail already counted, and warns again.
    now = new Date('2026-11-23T01:00:00Z');
    expect((await app.request('GET', '/usage', { token })).body.accepted_today).toBe(4);
    expect((await app.request('POST', '/emails/batch', { token, body: [mail(), mail()] })).status).toBe(200);
    const parkedAgain = await app.request('POST', '/emails', { token, body: mail() });
    expect(await sendAfter(parkedAgain.body.id)).toBe('2026-11-24T00:00:00.000Z');
    expect((await events()).filter(([type]) => type === 'quota.paused')).toHaveLength(2);
  });

  it('announces a new day’s quota lines at its midnight when parked mail takes it there, not at the next send', async () => {
    now = new Date('2026-11-22T10:00:00Z');
    const { token, events } = await onPlan('free');
    const receiver = await startWebhookReceiver();
    try {
      const hook = await app.request('POST', '/webhooks', {
        token,
        body: { endpoint: receiver.url, events: ['quota.warning', 'quota.reached', 'quota.paused'] },
      });
      expect(hook.status).toBe(201);
      const deliver = () => app.run(() => drainEndpoint(app.deps, hook.body.id));
      // Signed with the app's clock, so verified at its time, as they arrive.
      const verified = (from: number) => {
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(now);
        try {
          return receiver.received.slice(from).map(
            (r) =>
              new Webhook(hook.body.signing_secret).verify(r.body, r.headers as Record<string, string>) as {
                type: string;
                created_at: string;
                data: { used: number; resets_at: string };
              },
          );
        } finally {
          vi.useRealTimers();
        }
      };

      // Six go out today (the 150% ceiling); three then one more are parked for tomorrow, its whole quota.
      for (let i = 0; i < 6; i += 1)
        expect((await app.request('POST', '/emails', { token, body: mail() })).status).toBe(200);
      const parked = [
        (await app.request('POST', '/emails/batch', { token, body: [mail(), mail(), mail()] })).body.data,
        [(await app.request('POST', '/emails', { token, body: mail() })).body],
      ].flat();
      expect(parked).toHaveLength(4);
      await deliver();
      await receiver.waitFor(3);
      // Deliveries due at one instant go in no set order.
      const byType = (a: { type: string }, b: { type: string }) => a.type.localeCompare(b.type);
      expect(
        verified(0)
          .sort(byType)
          .map((d) => [d.type, d.created_at]),
      ).toEqual([
        ['quota.paused', '2026-11-22T10:00:00.000Z'],
        ['quota.reached', '2026-11-22T10:00:00.000Z'],
        ['quota.warning', '2026-11-22T10:00:00.000Z'],
      ]);

      // Just past midnight UTC the parked mail goes out, and tomorrow's lines are announced, before anyone sends.
      now = new Date('2026-11-23T00:00:05Z');
      await app.run(async () =>
        deliverDue(
          app.deps,
          (await app.deps.orm.em.findOneOrFail(Email, parked[0].id)).region,
          parked.map((e: { id: string }) => e.id),
        ),
      );
      await deliver();
      await receiver.waitFor(5);
      expect(
        verified(3)
          .sort(byType)
          .map((d) => [d.type, d.created_at, d.data.used, d.data.resets_at]),
      ).toEqual([
        ['quota.reached', '2026-11-23T00:00:00.000Z', 4, '2026-11-24T00:00:00.000Z'],
        ['quota.warning', '2026-11-23T00:00:00.000Z', 4, '2026-11-24T00:00:00.000Z'],
      ]);

      // The day's first API send finds them announced: once per period and line.
      now = new Date('2026-11-23T01:00:00Z');
      expect((await app.request('POST', '/emails', { token, body: mail() })).status).toBe(200);
      expect((await events()).map(([type]) => type)).toEqual([
        'quota.warning',
        'quota.reached',
        'quota.paused',
        'quota.warning',
        'quota.reached',
      ]);
      expect((await app.request('GET', '/usage', { token })).body.accepted_today).toBe(5);
    } finally {
      await receiver.close();
    }
  });

  it('a monthly plan refuses past its included volume with the renewal date, or bills overage when on', async () => {
    now = new Date('2026-11-22T10:00:00Z');
    const off = await onPlan('pro');
    expect(
      (await app.request('POST', '/emails/batch', { token: off.token, body: [mail(), mail(), mail(), mail()] })).status,
    ).toBe(200);
    const whole = await app.request('POST', '/emails/batch', { token: off.token, body: [mail(), mail()] });
    expect(whole.status).toBe(429);
    expect(whole.body).toEqual({
      statusCode: 429,
      name: 'monthly_quota_exceeded',
      message: expect.stringContaining('renews on 2026-12-01'),
    });
    expect((await app.request('POST', '/emails', { token: off.token, body: mail() })).status).toBe(200);
    expect((await app.request('POST', '/emails', { token: off.token, body: mail() })).body.name).toBe(
      'monthly_quota_exceeded',
    );
    expect((await off.events()).map(([type]) => type)).toEqual(['quota.warning', 'quota.reached']);

    const on = await onPlan('pro', true);
    for (let i = 0; i < 7; i += 1)
      expect((await app.request('POST', '/emails', { token: on.token, body: mail() })).status).toBe(200);
    expect((await app.request('GET', '/usage', { token: on.token })).body).toEqual({
      object: 'usage',
      plan: 'pro',
      cloud: true,
      accepted_today: 7,
      limits: { emails_per_month: 5, domains: null, contacts: null },
      period: {
        emails_sent: 7,
        included: 5,
        overage_enabled: true,
        overage_usd_per_1k: 0.9,
        starts_at: '2026-11-01T00:00:00.000Z',
        ends_at: '2026-12-01T00:00:00.000Z',
      },
    });

    // A new month starts from zero.
    now = new Date('2026-12-01T00:00:01Z');
    expect((await app.request('POST', '/emails', { token: off.token, body: mail() })).status).toBe(200);
  });

  it("the plan's contact cap applies unless the team has its own", async () => {
    const { token, teamId } = await onPlan('free');
    for (const email of ['a@example.com', 'b@example.com'])
      expect((await app.request('POST', '/contacts', { token, body: { email } })).status).toBe(201);
    const third = await app.request('POST', '/contacts', { token, body: { email: 'c@example.com' } });
    expect(third.status).toBe(403);
    expect(third.body.name).toBe('plan_limit_reached');
    expect((await app.request('PATCH', '/contacts/a@example.com', { token, body: { first_name: 'Ann' } })).status).toBe(
      200,
    );
    await app.run(() => app.deps.orm.em.nativeUpdate(Team, teamId, { contactLimit: 3 }));
    expect((await app.request('POST', '/contacts', { token, body: { email: 'c@example.com' } })).status).toBe(201);
  });

  it("the plan's domain cap applies to new domains", async () => {
    const { token } = await onPlan('free');
    expect((await app.request('POST', '/domains', { token, body: { name: 'one.example.com' } })).status).toBe(201);
    const second = await app.request('POST', '/domains', { token, body: { name: 'two.example.com' } });
    expect(second.status).toBe(403);
    expect(second.body).toEqual({
      statusCode: 403,
      name: 'plan_limit_reached',
      message: expect.stringContaining('limit of 1 domains'),
    });
  });

  it('concurrent sends racing for the last unit: exactly one wins', async () => {
    now = new Date('2026-11-22T10:00:00Z');
    const { token, teamId } = await onPlan('pro');
    await app.request('POST', '/emails/batch', { token, body: [mail(), mail(), mail(), mail()] });
    const results = await Promise.all(
      Array.from({ length: 12 }, () => app.request('POST', '/emails', { token, body: mail() })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 429)).toHaveLength(11);
    expect(await app.run(() => app.deps.orm.em.count(Email, { team: teamId }))).toBe(5);
  });
});

describe('rate limits', () => {
  const app = useTestApp({
    env: { POSTLANE_CLOUD: 'true', POSTLANE_RATE_LIMIT: '3', POSTLANE_RATE_LIMIT_WINDOW_SECONDS: '60' },
  });

  it('counts requests per team (a bulk call as one), with headers on every response and 429 past the limit', async () => {
    const { token } = await app.createTeamWithKey();
    const other = await app.createTeamWithKey();
    const first = await app.request('POST', '/emails/batch', { token, body: [mail(), mail(), mail()] });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('3');
    expect(first.headers.get('ratelimit-remaining')).toBe('2');
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(first.headers.get('ratelimit-policy')).toBe('3;w=60');
    const refused = await app.request('POST', '/emails', { token, body: { from: 'nope' } });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('ratelimit-remaining')).toBe('1');
    expect((await app.request('GET', '/emails', { token })).headers.get('ratelimit-remaining')).toBe('0');
    const limited = await app.request('GET', '/emails', { token });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ statusCode: 429, name: 'rate_limit_exceeded', message: expect.any(String) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect((await app.request('GET', '/emails', { token: other.token })).status).toBe(200);
  });
});
