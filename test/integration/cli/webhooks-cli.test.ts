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
});
