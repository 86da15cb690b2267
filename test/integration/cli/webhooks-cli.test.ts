import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookEndpoint } from '../../../server/entities/index.js';
import { emitEvent } from '../../../server/services/events/emit-event.js';
import { drainEndpoint } from '../../../server/services/webhooks/drain-endpoint.js';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

let receiver: WebhookReceiver;
let webhookId: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
});
const app = useTestApp({ env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });
beforeAll(async () => {
  const created = await app.request('POST', '/webhooks', {
    token: app.token,
    body: { endpoint: receiver.url, events: ['contact.created'] },
  });
  webhookId = created.body.id;
});

const cli = (args: string[]) =>
  runPostlane([...args, '--team', app.teamId], {
    DATABASE_URL: app.databaseUrl,
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
  });
const json = async (args: string[]) => {
  const result = await cli([...args, '--json']);
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

describe('postlane webhooks', () => {
  it('lists endpoints without secrets', async () => {
    const rows = await json(['webhooks', 'list']);
    expect(rows).toEqual([
      expect.objectContaining({
        id: webhookId,
        endpoint: receiver.url,
        events: ['contact.created'],
        status: 'enabled',
        consecutive_exhausted: 0,
      }),
    ]);
    expect(JSON.stringify(rows)).not.toContain('whsec_');
    const table = await cli(['webhooks', 'list']);
    expect(table.stdout).toContain(webhookId);
  });

  it('rotates in a framed card showing the new secret once and when the old one expires; deliveries then verify with it', async () => {
    const card = await cli(['webhooks', 'rotate', webhookId, '--overlap-hours', '2']);
    expect(card.code, card.output).toBe(0);
    // Piped: plain lines, no frame, the secret alone on its line, nothing over 200 characters.
    expect(card.stdout).not.toMatch(/╭/);
    expect(card.stdout.split('\n').every((line) => line.length <= 200)).toBe(true);
    expect(card.stdout).toMatch(/^whsec_[A-Za-z0-9+/=]+$/m);
    expect(card.stdout).toContain(receiver.url);
    const secret = card.stdout.match(/whsec_[A-Za-z0-9+/=]+/)![0];
    expect(card.stdout).toMatch(/still signs until \d{4}-\d\d-\d\dT/);
    const read = await app.run(() => app.deps.orm.em.findOneOrFail(WebhookEndpoint, webhookId));
    expect(app.deps.secrets.open(read.secret, `webhook:${webhookId}`)).toBe(secret);

    const rotated = await json(['webhooks', 'rotate', webhookId, '--overlap-hours', '0']);
    expect(rotated).toMatchObject({
      id: webhookId,
      previous_secret_expires_at: null,
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    await app.run(() =>
      app.deps.orm.em.transactional((tx) =>
        emitEvent(tx, { teamId: app.teamId, type: 'contact.created', data: { id: 'c1' } }),
      ),
    );
    await app.run(() => drainEndpoint(app.deps, webhookId));
    const [request] = receiver.received;
    expect(
      new Webhook(rotated.signing_secret).verify(request!.body, request!.headers as Record<string, string>),
    ).toMatchObject({ type: 'contact.created' });

    const bad = await cli(['webhooks', 'rotate', webhookId, '--overlap-hours', '73']);
    expect(bad.code).not.toBe(0);
  });

  it('lists deliveries and re-enables a disabled endpoint', async () => {
    const deliveries = await json(['webhooks', 'deliveries', webhookId]);
    expect(deliveries).toEqual([
      expect.objectContaining({
        type: 'contact.created',
        delivery_status: 'delivered',
        attempts: 1,
        last_status_code: 200,
      }),
    ]);
    await app.run(() =>
      app.deps.orm.em.nativeUpdate(
        WebhookEndpoint,
        { id: webhookId },
        { status: 'disabled', consecutiveExhausted: 20 },
      ),
    );
    expect(await json(['webhooks', 'enable', webhookId])).toMatchObject({ id: webhookId, status: 'enabled' });
    expect(await app.run(() => app.deps.orm.em.fork().findOneOrFail(WebhookEndpoint, webhookId))).toMatchObject({
      status: 'enabled',
      consecutiveExhausted: 0,
    });
    const missing = await cli(['webhooks', 'enable', crypto.randomUUID(), '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error.message).toBe('Webhook not found');
  });

  it('creates an endpoint through the same service as POST /webhooks, sends it a signed test event, and deletes it', async () => {
    const created = await json([
      'webhooks',
      'create',
      receiver.url,
      '--event',
      'email.delivered',
      '--event',
      'email.bounced',
    ]);
    expect(created).toMatchObject({
      object: 'webhook',
      id: expect.any(String),
      endpoint: receiver.url,
      events: ['email.delivered', 'email.bounced'],
      status: 'enabled',
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    const read = await app.request('GET', `/webhooks/${created.id}`, { token: app.token });
    expect(read.body).toMatchObject({ id: created.id, signing_secret: created.signing_secret });
    // Piped, the card is plain lines with the secret alone on its line.
    const card = await cli(['webhooks', 'create', receiver.url, '--event', '*']);
    expect(card.code, card.output).toBe(0);
    expect(card.stdout).toMatch(/^whsec_[A-Za-z0-9+/=]+$/m);
    const refused = await cli(['webhooks', 'create', receiver.url, '--event', 'email.nonsense']);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('must be an event type');

    const before = receiver.received.length;
    const tested = await json(['webhooks', 'test', created.id]);
    expect(tested).toMatchObject({ id: created.id, type: 'email.delivered', ok: true, status_code: 200 });
    const request = receiver.received[before]!;
    const payload = new Webhook(created.signing_secret).verify(request.body, request.headers as Record<string, string>);
    expect(payload).toMatchObject({ type: 'email.delivered', data: { test: true, email_id: expect.any(String) } });
    expect(request.headers['webhook-id']).toBe(tested.message_id);
    const other = await json(['webhooks', 'test', created.id, '--event', 'contact.created']);
    expect(other).toMatchObject({ type: 'contact.created', ok: true });
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ type: 'contact.created', data: { test: true } });
    // A test is not a delivery: nothing is stored for the endpoint.
    expect(await json(['webhooks', 'deliveries', created.id])).toEqual([]);

    const deleted = await json(['webhooks', 'delete', created.id]);
    expect(deleted).toEqual({ object: 'webhook', id: created.id, deleted: true, endpoint: receiver.url });
    expect((await app.request('GET', `/webhooks/${created.id}`, { token: app.token })).status).toBe(404);
    const again = await cli(['webhooks', 'test', created.id, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error.message).toBe('Webhook not found');
    // Eight runs of the compiled CLI, each a second or more on a machine the whole suite loads.
  }, 120_000);

  it('test exits 1 and shows the answer when the endpoint refuses', async () => {
    const refusing = await startWebhookReceiver(() => ({ status: 500, body: 'broken receiver' }));
    try {
      const created = await json(['webhooks', 'create', refusing.url, '--event', '*']);
      const result = await cli(['webhooks', 'test', created.id]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('Not accepted');
      expect(result.stdout).toContain('HTTP 500');
      expect(result.stdout).toContain('broken receiver');
    } finally {
      await refusing.close();
    }
  });
});
