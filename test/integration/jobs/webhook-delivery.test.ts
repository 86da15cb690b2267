import { until } from '../../support/until.js';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Email, Team, WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../../../server/entities/index.js';
import { emitEvent } from '../../../server/services/events/emit-event.js';
import { drainEndpoint } from '../../../server/services/webhooks/drain-endpoint.js';
import { purgeWebhookDeliveries } from '../../../server/services/maintenance/purges.js';
import { sweepWebhooks } from '../../../server/services/webhooks/sweep-webhooks.js';
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../../server/webhooks/delivery-policy.js';
import { useTestApp } from '../../support/test-app.js';
import { type Reply, startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

let now: number;
const receivers: WebhookReceiver[] = [];

const app = useTestApp({
  env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32', POSTLANE_WEBHOOK_TIMEOUT_SECONDS: '1' },
});
beforeAll(() => {
  // The injectable clock: retry times are asserted without waiting for them.
  now = Date.now();
  app.deps.clock = () => new Date(now);
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const em = () => app.deps.orm.em;

async function setup(script?: (index: number) => Reply, events: string[] = ['*']) {
  const receiver = await startWebhookReceiver(script && ((_, index) => script(index)));
  receivers.push(receiver);
  const { token, teamId } = await app.createTeamWithKey();
  const res = await app.request('POST', '/webhooks', { token, body: { endpoint: receiver.url, events } });
  expect(res.status).toBe(201);
  return { receiver, teamId, token, endpointId: res.body.id as string, secret: res.body.signing_secret as string };
}

const emit = (
  teamId: string,
  type = 'contact.created',
  data: Record<string, unknown> = { id: 'c1', email: 'jane@example.com' },
  at = now,
) => app.run(() => em().transactional((tx) => emitEvent(tx, { teamId, type, data, createdAt: new Date(at) })));
const drain = (endpointId: string) => app.run(() => drainEndpoint(app.deps, endpointId));
const deliveries = (endpointId: string) =>
  app.run(() => em().find(WebhookDelivery, { endpoint: endpointId }, { orderBy: { createdAt: 'asc', id: 'asc' } }));
const attempts = (deliveryId: string) =>
  app.run(() => em().find(WebhookAttempt, { delivery: deliveryId }, { orderBy: { createdAt: 'asc' } }));
const endpoint = (id: string) => app.run(() => em().findOneOrFail(WebhookEndpoint, id));
const advance = (ms: number) => (now += ms);

describe('the webhook delivery engine', () => {
  it('retries on the schedule with the same id and a fresh timestamp and signature, then exhausts', async () => {
    const { receiver, teamId, endpointId } = await setup(() => ({ status: 500, body: 'down' }));
    await emit(teamId);
    const start = now;
    await drain(endpointId);
    expect(receiver.received).toHaveLength(1);
    let elapsed = 0;
    for (const [index, delay] of WEBHOOK_RETRY_DELAYS_SECONDS.entries()) {
      const [delivery] = await deliveries(endpointId);
      expect(delivery).toMatchObject({ status: 'retry', attempts: index + 1, lastStatusCode: 500 });
      elapsed += delay * 1000;
      expect(delivery!.dueAt.getTime()).toBe(start + elapsed);
      // Not due a second early.
      now = start + elapsed - 1000;
      await drain(endpointId);
      expect(receiver.received).toHaveLength(index + 1);
      now = start + elapsed;
      await drain(endpointId);
      expect(receiver.received).toHaveLength(index + 2);
    }
    const [delivery] = await deliveries(endpointId);
    expect(delivery).toMatchObject({ status: 'exhausted', attempts: 7, lastError: 'all attempts failed' });
    expect(await attempts(delivery!.id)).toHaveLength(7);
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const timestamps = receiver.received.map((r) => Number(r.headers['webhook-timestamp']));
    expect(timestamps[1]! - timestamps[0]!).toBe(5);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-signature'])).size).toBe(7);
    expect((await endpoint(endpointId)).consecutiveExhausted).toBe(1);
    now = Date.now();
  });

  it('honours 429 Retry-After in seconds and as an HTTP date, capped at an hour, without using up an attempt', async () => {
    const replies: Reply[] = [
      { status: 429, headers: { 'retry-after': '120' } },
      { status: 429, headers: { 'retry-after': new Date(now + 600_000).toUTCString() } },
      { status: 429, headers: { 'retry-after': '86400' } },
      { status: 429 },
      { status: 204 },
    ];
    const { receiver, teamId, endpointId } = await setup((i) => replies[i]!);
    await emit(teamId);
    const start = now;
    await drain(endpointId);
    let [delivery] = await deliveries(endpointId);
    expect(delivery).toMatchObject({ status: 'retry', attempts: 0 });
    expect(delivery!.dueAt.getTime()).toBe(start + 120_000);

    now = start + 120_000;
    await drain(endpointId);
    [delivery] = await deliveries(endpointId);
    expect(delivery).toMatchObject({ status: 'retry', attempts: 0 });
    expect(Math.abs(delivery!.dueAt.getTime() - (start + 600_000))).toBeLessThanOrEqual(1000);

    now = delivery!.dueAt.getTime();
    await drain(endpointId);
    [delivery] = await deliveries(endpointId);
    expect(delivery!.dueAt.getTime()).toBe(now + 3600_000);

    // A 429 without Retry-After is an ordinary failure.
    now = delivery!.dueAt.getTime();
    await drain(endpointId);
    [delivery] = await deliveries(endpointId);
    expect(delivery).toMatchObject({ status: 'retry', attempts: 1 });
    expect(delivery!.dueAt.getTime()).toBe(now + 5000);

    now = delivery!.dueAt.getTime();
    await drain(endpointId);
    [delivery] = await deliveries(endpointId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 204 });
    expect(receiver.received).toHaveLength(5);
    const history = await attempts(delivery!.id);
    expect(history.map((a) => [a.statusCode, a.counted])).toEqual([
      [429, false],
      [429, false],
      [429, false],
      [429, true],
      [204, true],
    ]);
    now = Date.now();
  });

  it('treats 410, redirects (never followed), timeouts and resets as failures, and stores at most 1 KiB of a body', async () => {
    const target = await startWebhookReceiver();
    receivers.push(target);
    const replies: Reply[] = [
      { status: 410, body: 'x'.repeat(100_000) },
      { status: 301, headers: { location: target.url } },
      'hang',
      'reset',
    ];
    const history = [];
    for (const reply of replies) {
      const { teamId, endpointId } = await setup(() => reply);
      await emit(teamId);
      await drain(endpointId);
      const [delivery] = await deliveries(endpointId);
      expect(delivery).toMatchObject({ status: 'retry', attempts: 1 });
      history.push(...(await attempts(delivery!.id)));
    }
    expect(history.map((a) => [a.statusCode, a.errorClass])).toEqual([
      [410, 'http_status'],
      [301, 'redirect'],
      [null, 'timeout'],
      [null, 'connection'],
    ]);
    expect(history[0]!.response).toHaveLength(1024);
    expect(target.received).toHaveLength(0);
  });

  it('drops a delivery 24 hours after queueing without another attempt', async () => {
    const { receiver, teamId, endpointId } = await setup(() => ({ status: 200 }));
    await emit(teamId);
    advance(24 * 3600_000);
    await drain(endpointId);
    expect(receiver.received).toHaveLength(0);
    const [delivery] = await deliveries(endpointId);
    expect(delivery).toMatchObject({ status: 'exhausted', attempts: 0, lastError: 'dropped 24 hours after queueing' });
    now = Date.now();
  });

  it('disables an endpoint after 20 exhausted deliveries in a row, emails the owners at 10 and 20, and replays nothing', async () => {
    const { receiver, teamId, endpointId } = await setup(() => ({ status: 200 }));
    await app.run(() => em().nativeUpdate(Team, { id: teamId }, { ownerEmails: ['owner@acme.test'] }));
    for (let i = 0; i < 25; i += 1) await emit(teamId);
    advance(25 * 3600_000);
    await drain(endpointId);
    now = Date.now();
    expect(receiver.received).toHaveLength(0);
    const row = await endpoint(endpointId);
    expect(row.status).toBe('disabled');
    // Lanes already past their claim when the 20th exhausted may add one or two more.
    expect(row.consecutiveExhausted).toBeGreaterThanOrEqual(20);
    const rows = await deliveries(endpointId);
    expect(rows.every((d) => d.status === 'exhausted')).toBe(true);
    expect(rows.filter((d) => d.lastError === 'endpoint disabled').length).toBeGreaterThanOrEqual(1);

    // Both stamped with the frozen clock, so sorted by subject rather than time.
    const notices = await app.run(() => em().find(Email, { team: teamId }, { orderBy: { subject: 'asc' } }));
    expect(notices.map((n) => n.subject)).toEqual([
      `Webhook deliveries to ${receiver.url} are failing`,
      `Webhook endpoint ${receiver.url} was disabled`,
    ]);
    expect(notices[0]!.to).toEqual(['owner@acme.test']);
    expect(notices[0]!.from).toBe('Postlane <postlane@localhost.localdomain>');

    // Disabled: new events are not queued for it; re-enabled, the outage is not replayed.
    await emit(teamId);
    expect(await deliveries(endpointId)).toHaveLength(25);
    const { token } = await app.createTeamWithKey();
    expect((await app.request('PATCH', `/webhooks/${endpointId}`, { token, body: { status: 'enabled' } })).status).toBe(
      404,
    );
    await app.run(async () => {
      const { updateWebhook } = await import('../../../server/services/webhooks/update-webhook.js');
      await updateWebhook(app.deps, teamId, endpointId, { status: 'enabled' });
    });
    expect(await endpoint(endpointId)).toMatchObject({ status: 'enabled', consecutiveExhausted: 0 });
    await drain(endpointId);
    expect(receiver.received).toHaveLength(0);
    await emit(teamId);
    await drain(endpointId);
    expect(receiver.received).toHaveLength(1);
  });

  it('a success resets the exhausted streak', async () => {
    let fail = true;
    const { teamId, endpointId } = await setup(() => ({ status: fail ? 500 : 200 }));
    await emit(teamId);
    advance(25 * 3600_000);
    await drain(endpointId);
    now = Date.now();
    expect((await endpoint(endpointId)).consecutiveExhausted).toBe(1);
    fail = false;
    await emit(teamId);
    await drain(endpointId);
    expect((await endpoint(endpointId)).consecutiveExhausted).toBe(0);
  });

  it('keeps at most 8 requests in flight and 50 per second per endpoint, starting in due order', async () => {
    const slow = await setup(() => ({ status: 200, delayMs: 150 }));
    for (let i = 0; i < 40; i += 1) await emit(slow.teamId, 'contact.created', { seq: i });
    await drain(slow.endpointId);
    expect(slow.receiver.received).toHaveLength(40);
    expect(slow.receiver.maxOpen).toBe(8);

    const fast = await setup(() => ({ status: 200 }));
    for (let i = 0; i < 120; i += 1) await emit(fast.teamId, 'contact.created', { seq: i }, now - 1000 + i);
    await drain(fast.endpointId);
    const arrivals = fast.receiver.received.map((r) => r.at);
    expect(arrivals).toHaveLength(120);
    // Starts are spaced 20 ms apart: 120 of them span at least 119 × 20 ms (less a little timer slack).
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(119 * 20 - 40);
    // The receiver shares this process, so an event-loop stall on a busy machine can bunch some
    // arrivals together; a burst (no spacing) would put far more than 60 in one second.
    const busiestSecond = Math.max(...arrivals.map((t) => arrivals.filter((u) => u >= t && u < t + 1000).length));
    expect(busiestSecond).toBeLessThanOrEqual(60);
    // Started in due order, 20 ms apart; one whose connection took longer than that to open (a busy
    // machine) may arrive after the next one or two, never further out of place.
    const seqs = fast.receiver.received.map((r) => JSON.parse(r.body).data.seq as number);
    expect([...seqs].sort((a, b) => a - b)).toEqual([...Array(120).keys()]);
    expect(Math.max(...seqs.map((seq, at) => Math.abs(seq - at)))).toBeLessThanOrEqual(3);
  });

  it('wakes the endpoint when the event was written in a nested transaction, once the outer one commits', async () => {
    const { teamId, endpointId } = await setup(() => ({ status: 200 }));
    app.recorded.length = 0;
    await app.run(() =>
      em().transactional(async (outer) => {
        await outer.transactional((inner) =>
          emitEvent(inner, { teamId, type: 'contact.created', data: { id: 'c2' }, createdAt: new Date(now) }),
        );
        // Only a savepoint is released so far: waking now would find nothing to deliver. A wake
        // would be enqueued 5 ms after the release (WAKE_COALESCE_MS); a second is a generous bound.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(app.recorded).toEqual([]);
      }),
    );
    await until(async () => app.recorded.length > 0);
    expect(app.recorded).toEqual([{ name: 'webhook.deliver', data: { endpointId }, at: undefined }]);
  });

  it('recovers a delivery whose worker died mid-attempt (lease expiry plus the sweep), delivering it once', async () => {
    const { receiver, teamId, endpointId } = await setup(() => ({ status: 200 }));
    await emit(teamId);
    // What a worker killed mid-request leaves: the endpoint lease held, the delivery claimed.
    await app.run(async () => {
      await em()
        .getConnection()
        .execute(`UPDATE webhook_endpoint SET drain_lease_expires_at = now() + interval '1 hour' WHERE id = ?`, [
          endpointId,
        ]);
      await em()
        .getConnection()
        .execute(`UPDATE webhook_delivery SET status = 'sending', lease_expires_at = ? WHERE endpoint_id = ?`, [
          new Date(now + 60_000),
          endpointId,
        ]);
    });
    await drain(endpointId);
    expect(receiver.received).toHaveLength(0);
    app.recorded.length = 0;
    expect(await app.run(() => sweepWebhooks(app.deps))).toMatchObject({ woken: 0 });

    // Time passes: both leases run out; the sweep wakes the endpoint and the next run delivers.
    advance(10 * 60_000);
    await app.run(() =>
      em()
        .getConnection()
        .execute(`UPDATE webhook_endpoint SET drain_lease_expires_at = now() - interval '1 second' WHERE id = ?`, [
          endpointId,
        ]),
    );
    await app.run(() => sweepWebhooks(app.deps));
    expect(app.recorded).toContainEqual({ name: 'webhook.deliver', data: { endpointId }, at: undefined });
    await drain(endpointId);
    await drain(endpointId);
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(endpointId))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    now = Date.now();
  });

  it('refuses at connect time an address the create-time check never saw', async () => {
    const { teamId, endpointId } = await setup(() => ({ status: 200 }));
    // As if DNS changed after creation: the stored URL now leads to an address outside the allowlist.
    await app.run(() => em().nativeUpdate(WebhookEndpoint, { id: endpointId }, { url: 'http://127.0.0.2:9/hook' }));
    await emit(teamId);
    await drain(endpointId);
    const [delivery] = await deliveries(endpointId);
    const [attempt] = await attempts(delivery!.id);
    expect(attempt).toMatchObject({ statusCode: null, errorClass: 'blocked' });
  });

  it('signs with both secrets during a rotation overlap, new first, and with the new one only after overlap 0', async () => {
    const { receiver, teamId, endpointId, token, secret: first } = await setup();
    const rotated = await app.request('POST', `/webhooks/${endpointId}/rotate`, { token, body: { overlap_hours: 1 } });
    await emit(teamId);
    await drain(endpointId);
    const during = receiver.received[0]!;
    const [newCandidate, oldCandidate] = String(during.headers['webhook-signature']).split(' ');
    const headers = during.headers as Record<string, string>;
    expect(() =>
      new Webhook(rotated.body.signing_secret).verify(during.body, { ...headers, 'webhook-signature': newCandidate! }),
    ).not.toThrow();
    expect(() =>
      new Webhook(first).verify(during.body, { ...headers, 'webhook-signature': oldCandidate! }),
    ).not.toThrow();

    // The window ends: only the new secret signs.
    advance(3600_000 + 1000);
    await emit(teamId);
    await drain(endpointId);
    expect(String(receiver.received[1]!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    now = Date.now();

    const dropped = await app.request('POST', `/webhooks/${endpointId}/rotate`, { token, body: { overlap_hours: 0 } });
    expect(dropped.body.previous_secret_expires_at).toBeNull();
    await emit(teamId);
    await drain(endpointId);
    const after = receiver.received[2]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(
      new Webhook(dropped.body.signing_secret).verify(after.body, after.headers as Record<string, string>),
    ).toMatchObject({ type: 'contact.created' });
    expect(() =>
      new Webhook(rotated.body.signing_secret).verify(after.body, after.headers as Record<string, string>),
    ).toThrow(/No matching signature/);
  });

  it('purges settled deliveries and their attempts after the retention period', async () => {
    const { teamId, endpointId } = await setup();
    await emit(teamId);
    await drain(endpointId);
    await emit(teamId);
    advance(31 * 24 * 3600_000);
    expect(await app.run(() => purgeWebhookDeliveries(app.deps))).toBeGreaterThanOrEqual(1);
    now = Date.now();
    // The undelivered one stays until it settles.
    expect((await deliveries(endpointId)).map((d) => d.status)).toEqual(['pending']);
  });
});
