import { Webhook } from 'standardwebhooks';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Email, Event, Team } from '../../../server/entities/index.js';
import { runBroadcast } from '../../../server/services/broadcasts/run-broadcast.js';
import { checkDeliverability } from '../../../server/services/deliverability/check-deliverability.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { recordEmailEvent } from '../../../server/services/emails/record-email-event.js';
import { drainEndpoint } from '../../../server/services/webhooks/drain-endpoint.js';
import { queryDatabase } from '../../support/db.js';
import { useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver } from '../../support/webhook-receiver.js';

const DAY = 24 * 3600_000;
const mail = (to = 'user@example.com') => ({ from: 'a@acme.test', to, subject: 'Hi', text: 'Hi' });

/** One test app and its helpers: sends go through the API and the real send path (capture provider). */
function harness(env: Record<string, string>) {
  const h = {
    app: useTestApp({
      env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32', POSTLANE_PUBLIC_URL: 'https://mail.example.com', ...env },
    }),
    now: new Date(),
    advance: (ms: number) => (h.now = new Date(h.now.getTime() + ms)),
    /** `count` emails accepted by the API and handed to the provider (which accepts them): the rates' denominator. */
    async sent(token: string, count: number): Promise<string[]> {
      const batch = await h.app.request('POST', '/emails/batch', {
        token,
        body: Array.from({ length: count }, (_, i) => mail(`r${i}@example.com`)),
      });
      expect(batch.status).toBe(200);
      const ids = batch.body.data.map((e: { id: string }) => e.id);
      await h.app.run(() => deliverDue(h.app.deps, 'us-east-1', ids));
      return ids;
    },
    /** What a provider path does with a hard bounce or complaint: recordEmailEvent in its transaction. */
    outcome(id: string, type: 'email.bounced' | 'email.complained' = 'email.bounced', bounceType = 'Permanent') {
      return h.app.run(() =>
        h.app.deps.orm.em.transactional(async (tx) =>
          recordEmailEvent(
            h.app.deps,
            tx,
            await tx.findOneOrFail(Email, id),
            type,
            h.now,
            type === 'email.bounced' ? { bounce: { type: bounceType } } : {},
          ),
        ),
      );
    },
    check: () => h.app.run(() => checkDeliverability(h.app.deps)),
    async events(teamId: string) {
      const rows = await h.app.run(() =>
        h.app.deps.orm.em.find(
          Event,
          { team: teamId, type: { $like: 'deliverability.%' } },
          { orderBy: { createdAt: 'asc', type: 'desc' } },
        ),
      );
      return rows.map((e) => [e.type, e.payload]);
    },
    pausedAt: async (teamId: string) =>
      (await h.app.run(() => h.app.deps.orm.em.findOneOrFail(Team, teamId, { refresh: true }))).sendingPausedAt,
    /** A segment of `count` contacts, written in one statement, and a broadcast to it. */
    async broadcastDraft(token: string, teamId: string, count: number) {
      const segment = await h.app.request('POST', '/segments', { token, body: { name: 'All' } });
      await queryDatabase(
        h.app.databaseUrl,
        `WITH c AS (
           INSERT INTO contact (id, created_at, updated_at, team_id, email, unsubscribed, properties)
           SELECT gen_random_uuid(), now(), now(), $1::uuid, 'c' || g || '-' || $1::text || '@example.com', false, '{}' FROM generate_series(1, $2) g RETURNING id)
         INSERT INTO segment_member (segment_id, contact_id, created_at) SELECT $3, id, now() FROM c`,
        [teamId, count, segment.body.id],
      );
      const draft = await h.app.request('POST', '/broadcasts', {
        token,
        body: { segment_id: segment.body.id, from: 'a@acme.test', subject: 'News', text: 'Hi {{{EMAIL}}}' },
      });
      expect(draft.status).toBe(201);
      return draft.body.id as string;
    },
  };
  // The injected clock: the window slides without waiting for it.
  beforeAll(() => {
    h.app.deps.clock = () => h.now;
  });
  return h;
}

describe('team deliverability', () => {
  // Small lines and volume so a test reaches them with a few emails; the region line is out of reach here.
  const h = harness({
    POSTLANE_DELIVERABILITY_MIN_VOLUME: '20',
    POSTLANE_BOUNCE_WARNING_PERCENT: '10',
    POSTLANE_BOUNCE_PAUSE_PERCENT: '20',
    POSTLANE_COMPLAINT_WARNING_PERCENT: '5',
    POSTLANE_COMPLAINT_PAUSE_PERCENT: '10',
    POSTLANE_REGION_BOUNCE_PAUSE_PERCENT: '100',
    POSTLANE_REGION_COMPLAINT_PAUSE_PERCENT: '100',
    // Broadcasts pace at 1 email a second, so a run writes 40 of them (30 s ahead) and stops.
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'capture', regions: ['us-east-1'], rate_per_second: 1 }]),
    POSTLANE_BROADCAST_BATCH_SIZE: '10',
  });
  beforeEach(() => {
    h.now = new Date();
  });

  const data = (metric: string, rate: number, limit: number) => ({
    metric,
    rate,
    limit,
    window_days: 7,
    dashboard_url: 'https://mail.example.com',
  });

  it('warns at the risk line and pauses at the pause line, signed webhooks once each; every send is refused with 403 sending_paused; another team is untouched', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { token, teamId } = await h.app.createTeamWithKey();
      const other = await h.app.createTeamWithKey();
      const hook = await h.app.request('POST', '/webhooks', {
        token,
        body: { endpoint: receiver.url, events: ['deliverability.warning', 'deliverability.paused'] },
      });
      const ids = await h.sent(token, 20);
      await h.sent(other.token, 20);

      await h.outcome(ids[0]!);
      expect(await h.events(teamId)).toEqual([]);
      await h.outcome(ids[1]!);
      await h.outcome(ids[2]!);
      // The same bounce reported again counts once.
      await h.outcome(ids[2]!);
      expect(await h.events(teamId)).toEqual([['deliverability.warning', data('bounce_rate', 0.1, 0.1)]]);
      expect(await h.pausedAt(teamId)).toBeNull();
      await h.outcome(ids[3]!);
      expect(await h.events(teamId)).toEqual([
        ['deliverability.warning', data('bounce_rate', 0.1, 0.1)],
        ['deliverability.paused', data('bounce_rate', 0.2, 0.2)],
      ]);
      expect(await h.pausedAt(teamId)).toEqual(h.now);
      await h.outcome(ids[4]!);
      await h.check();
      expect(await h.events(teamId)).toHaveLength(2);

      await h.app.run(() => drainEndpoint(h.app.deps, hook.body.id));
      expect(receiver.received).toHaveLength(2);
      const verified = receiver.received.map((r) =>
        new Webhook(hook.body.signing_secret).verify(
          r.body,
          Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)])),
        ),
      );
      expect(verified).toHaveLength(2);
      expect(verified).toEqual(
        expect.arrayContaining([
          { type: 'deliverability.warning', created_at: h.now.toISOString(), data: data('bounce_rate', 0.1, 0.1) },
          { type: 'deliverability.paused', created_at: h.now.toISOString(), data: data('bounce_rate', 0.2, 0.2) },
        ]),
      );

      const single = await h.app.request('POST', '/emails', { token, body: mail() });
      expect(single.status).toBe(403);
      expect(single.body).toMatchObject({ statusCode: 403, name: 'sending_paused' });
      expect((await h.app.request('POST', '/emails/batch', { token, body: [mail()] })).body).toMatchObject({
        statusCode: 403,
        name: 'sending_paused',
      });
      const draft = await h.broadcastDraft(token, teamId, 3);
      const broadcast = await h.app.request('POST', `/broadcasts/${draft}/send`, { token, body: {} });
      expect(broadcast.status).toBe(403);
      expect(broadcast.body.name).toBe('sending_paused');
      expect((await h.app.request('GET', `/broadcasts/${draft}`, { token })).body.status).toBe('draft');
      const segmentId = (await h.app.request('GET', `/broadcasts/${draft}`, { token })).body.segment_id;
      const created = await h.app.request('POST', '/broadcasts', {
        token,
        body: { segment_id: segmentId, from: 'a@acme.test', subject: 'x', text: 'x', send: true },
      });
      expect(created.body).toMatchObject({ statusCode: 403, name: 'sending_paused' });

      expect((await h.app.request('POST', '/emails', { token: other.token, body: mail() })).status).toBe(200);
      expect(await h.pausedAt(other.teamId)).toBeNull();
      expect(await h.events(other.teamId)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('clears the pause and ends the episode by itself once the window slides past the bounces; the next crossing warns again', async () => {
    const { token, teamId } = await h.app.createTeamWithKey();
    const ids = await h.sent(token, 20);
    for (const id of ids.slice(0, 4)) await h.outcome(id);
    expect(await h.pausedAt(teamId)).not.toBeNull();

    // Six days on, the bounces are still in the 7-day window.
    h.advance(6 * DAY);
    await h.check();
    expect(await h.pausedAt(teamId)).not.toBeNull();
    h.advance(DAY);
    await h.check();
    expect(await h.pausedAt(teamId)).toBeNull();
    expect((await h.app.request('POST', '/emails', { token, body: mail() })).status).toBe(200);

    // A new episode: warned again.
    const later = await h.sent(token, 20);
    await h.outcome(later[0]!);
    await h.outcome(later[1]!);
    const types = (await h.events(teamId)).map(([type]) => type);
    expect(types).toEqual(['deliverability.warning', 'deliverability.paused', 'deliverability.warning']);
  });

  it('warns once per episode; volume that dilutes the rate ends the episode without a word, and only a new crossing warns again', async () => {
    const { token, teamId } = await h.app.createTeamWithKey();
    const ids = await h.sent(token, 20);
    await h.outcome(ids[0]!);
    await h.outcome(ids[1]!);
    await h.outcome(ids[2]!);
    expect((await h.events(teamId)).map(([type]) => type)).toEqual(['deliverability.warning']);

    const more = await h.sent(token, 20);
    await h.check();
    // 3 of 40: under the line, the episode is over (nothing is announced); 4 of 40 crosses again.
    expect((await h.events(teamId)).map(([type]) => type)).toEqual(['deliverability.warning']);
    await h.outcome(more[0]!);
    expect(await h.events(teamId)).toEqual([
      ['deliverability.warning', data('bounce_rate', 0.1, 0.1)],
      ['deliverability.warning', data('bounce_rate', 0.1, 0.1)],
    ]);
  });

  it('draws no verdict below the minimum volume', async () => {
    const { token, teamId } = await h.app.createTeamWithKey();
    const ids = await h.sent(token, 10);
    for (const id of ids.slice(0, 8)) await h.outcome(id);
    await h.check();
    expect(await h.events(teamId)).toEqual([]);
    expect(await h.pausedAt(teamId)).toBeNull();
    expect((await h.app.request('POST', '/emails', { token, body: mail() })).status).toBe(200);
  });

  it('counts hard bounces only: a transient or undetermined one leaves the rate alone', async () => {
    const { token, teamId } = await h.app.createTeamWithKey();
    const ids = await h.sent(token, 20);
    for (const id of ids.slice(0, 4)) await h.outcome(id, 'email.bounced', 'Transient');
    for (const id of ids.slice(4, 8)) await h.outcome(id, 'email.bounced', 'Undetermined');
    expect(await h.events(teamId)).toEqual([]);
    // A hard bounce after a soft one of the same email counts.
    await h.outcome(ids[0]!, 'email.bounced', 'Permanent');
    // An email the provider refused outright (never accepted) counts as sent and bounced.
    const refused = await h.app.request('POST', '/emails', { token, body: mail() });
    await h.outcome(refused.body.id);
    const [counts] = await queryDatabase(
      h.app.databaseUrl,
      'SELECT sum(sent)::int AS sent, sum(bounced)::int AS bounced FROM deliverability_day WHERE team_id = $1',
      [teamId],
    );
    expect(counts).toEqual({ sent: 21, bounced: 2 });
  });

  it('judges complaints on their own lines', async () => {
    const { token, teamId } = await h.app.createTeamWithKey();
    const ids = await h.sent(token, 20);
    await h.outcome(ids[0]!, 'email.complained');
    expect(await h.events(teamId)).toEqual([['deliverability.warning', data('complaint_rate', 0.05, 0.05)]]);
    await h.outcome(ids[1]!, 'email.complained');
    expect(await h.events(teamId)).toEqual([
      ['deliverability.warning', data('complaint_rate', 0.05, 0.05)],
      ['deliverability.paused', data('complaint_rate', 0.1, 0.1)],
    ]);
    expect((await h.app.request('POST', '/emails', { token, body: mail() })).body.name).toBe('sending_paused');
  });

  it('announces a crossing once when bounces are recorded concurrently', async () => {
    const { token, teamId } = await h.app.createTeamWithKey();
    const ids = await h.sent(token, 20);
    await Promise.all(ids.slice(0, 8).map((id) => h.outcome(id)));
    expect((await h.events(teamId)).map(([type]) => type)).toEqual(['deliverability.warning', 'deliverability.paused']);
    const { bounced } = (
      await queryDatabase<{ bounced: number }>(
        h.app.databaseUrl,
        'SELECT sum(bounced)::int AS bounced FROM deliverability_day WHERE team_id = $1',
        [teamId],
      )
    )[0]!;
    expect(bounced).toBe(8);
  });

  it('stops a running broadcast while the team is paused, and resumes it where it stopped once the pause clears', async () => {
    const { token, teamId } = await h.app.createTeamWithKey();
    const ids = await h.sent(token, 20);
    const id = await h.broadcastDraft(token, teamId, 60);
    expect((await h.app.request('POST', `/broadcasts/${id}/send`, { token, body: {} })).status).toBe(200);
    await h.app.run(() => runBroadcast(h.app.deps, id));
    const written = async () =>
      (
        await queryDatabase<{ n: number; distinct: number }>(
          h.app.databaseUrl,
          'SELECT count(*)::int AS n, count(DISTINCT "to"[1])::int AS distinct FROM email WHERE broadcast_id = $1',
          [id],
        )
      )[0]!;
    expect(await written()).toEqual({ n: 40, distinct: 40 });

    for (const bounced of ids.slice(0, 4)) await h.outcome(bounced);
    h.advance(10_000);
    await h.app.run(() => runBroadcast(h.app.deps, id));
    expect(await written()).toEqual({ n: 40, distinct: 40 });
    expect((await h.app.request('GET', `/broadcasts/${id}`, { token })).body.status).toBe('queued');

    h.advance(7 * DAY);
    await h.check();
    expect(await h.pausedAt(teamId)).toBeNull();
    await h.app.run(() => runBroadcast(h.app.deps, id));
    expect(await written()).toEqual({ n: 60, distinct: 60 });
  });
});

describe('region aggregate', () => {
  // Teams' own lines are out of reach; the region's bounce line is 10% over every team's mail.
  const h = harness({
    POSTLANE_DELIVERABILITY_MIN_VOLUME: '20',
    POSTLANE_BOUNCE_WARNING_PERCENT: '50',
    POSTLANE_BOUNCE_PAUSE_PERCENT: '60',
    POSTLANE_REGION_BOUNCE_PAUSE_PERCENT: '10',
  });

  it('past its line, pauses broadcasts in the region (403 broadcasts_paused) while transactional mail goes on, and clears by itself', async () => {
    const a = await h.app.createTeamWithKey();
    const b = await h.app.createTeamWithKey();
    const aIds = await h.sent(a.token, 20);
    const bIds = await h.sent(b.token, 20);
    for (const id of aIds.slice(0, 3)) await h.outcome(id);
    await h.check();
    const draft = await h.broadcastDraft(b.token, b.teamId, 3);
    // 3 of 40: under the line.
    const other = await h.broadcastDraft(a.token, a.teamId, 3);
    expect((await h.app.request('POST', `/broadcasts/${other}/send`, { token: a.token, body: {} })).status).toBe(200);

    await h.outcome(bIds[0]!);
    await h.outcome(bIds[1]!);
    await h.check();
    // 5 of 40 over both teams: team b (2 of 20) is fine on its own, but the region is past 10%.
    const refused = await h.app.request('POST', `/broadcasts/${draft}/send`, { token: b.token, body: {} });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      statusCode: 403,
      name: 'broadcasts_paused',
      message: expect.stringContaining('us-east-1'),
    });
    const segmentId = (await h.app.request('GET', `/broadcasts/${draft}`, { token: b.token })).body.segment_id;
    const created = await h.app.request('POST', '/broadcasts', {
      token: b.token,
      body: { segment_id: segmentId, from: 'a@acme.test', subject: 'x', text: 'x', send: true },
    });
    expect(created.body).toMatchObject({ statusCode: 403, name: 'broadcasts_paused' });
    expect((await h.app.request('POST', '/emails', { token: b.token, body: mail() })).status).toBe(200);
    expect((await h.app.request('POST', '/emails/batch', { token: a.token, body: [mail()] })).status).toBe(200);
    expect(await h.events(a.teamId)).toEqual([]);
    expect(await h.events(b.teamId)).toEqual([]);

    // A broadcast already under way in the region stops writing, without losing its place.
    await h.app.run(() => runBroadcast(h.app.deps, other));
    expect((await h.app.request('GET', `/broadcasts/${other}`, { token: a.token })).body).toMatchObject({
      status: 'queued',
    });

    // New mail dilutes the aggregate under the line: broadcasts resume.
    await h.sent(a.token, 20);
    await h.check();
    expect((await h.app.request('POST', `/broadcasts/${draft}/send`, { token: b.token, body: {} })).status).toBe(200);
  });
});
