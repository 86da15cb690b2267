import { Resend } from 'resend';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';
import { untilFound } from '../../support/until.js';

let resend: Resend;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
});
const app = useTestApp({ jobs: 'worker', env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });
beforeAll(async () => {
  process.env.RESEND_BASE_URL = app.url;
  resend = new Resend(app.token);
});
afterAll(async () => {
  delete process.env.RESEND_BASE_URL;
});

const svixHeaders = (headers: Record<string, unknown>) => ({
  id: headers['svix-id'] as string,
  timestamp: headers['svix-timestamp'] as string,
  signature: headers['svix-signature'] as string,
});

const sendEmail = async (subject: string) => {
  const { data, error } = await resend.emails.send({
    from: 'a@acme.test',
    to: 'jane@example.com',
    subject,
    text: 'hi',
  });
  expect(error).toBeNull();
  return data!.id;
};

describe('webhooks through the official resend SDK', () => {
  it('creates an endpoint, delivers email.sent signed for both verifiers, and shows its history', async () => {
    const { data: created, error } = await resend.webhooks.create({
      endpoint: receiver.url,
      events: ['email.sent', 'email.delivered'],
    });
    expect(error).toBeNull();
    expect(created).toMatchObject({
      object: 'webhook',
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const secret = created!.signing_secret;

    const { data: read } = await resend.webhooks.get(created!.id);
    expect(read).toMatchObject({
      object: 'webhook',
      id: created!.id,
      endpoint: receiver.url,
      events: ['email.sent', 'email.delivered'],
      status: 'enabled',
      signing_secret: secret,
      previous_secret_expires_at: null,
    });
    const { data: list } = await resend.webhooks.list();
    expect(list!.data).toEqual([
      {
        id: created!.id,
        endpoint: receiver.url,
        events: ['email.sent', 'email.delivered'],
        status: 'enabled',
        created_at: read!.created_at,
      },
    ]);

    const emailId = await sendEmail('hooked');
    await receiver.waitFor(1);
    const [request] = receiver.received;
    const payload = JSON.parse(request!.body);
    expect(payload).toMatchObject({
      type: 'email.sent',
      created_at: expect.any(String),
      data: { email_id: emailId, subject: 'hooked', to: ['jane@example.com'] },
    });
    expect(request!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(request!.headers['svix-id']).toBe(request!.headers['webhook-id']);
    expect(new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>)).toEqual(payload);
    expect(
      resend.webhooks.verify({ payload: request!.body, headers: svixHeaders(request!.headers), webhookSecret: secret }),
    ).toEqual(payload);

    // History as the SDK reads it.
    const events = await untilFound(async () => {
      const { data } = await resend.webhooks.events.list({ webhookId: created!.id });
      return data!.data[0]?.status === 'success' ? data! : undefined;
    }, 'the delivery was never listed as a success');
    expect(events.data).toHaveLength(1);
    expect(events.data[0]).toMatchObject({ type: 'email.sent', status: 'success' });
    const eventId = events.data[0]!.id;
    const { data: event } = await resend.webhooks.events.get({ webhookId: created!.id, eventId });
    expect(event).toMatchObject({
      object: 'webhook_event',
      id: eventId,
      status: 'success',
      next_attempt_at: null,
      payload,
    });
    const { data: attempts } = await resend.webhooks.events.attempts.list({ webhookId: created!.id, eventId });
    expect(attempts!.data).toEqual([
      expect.objectContaining({ http_status_code: 200, response: 'ok', sent_at: expect.any(String) }),
    ]);

    // A replay keeps the message id, so receivers deduplicate it.
    const { data: replayed, error: replayError } = await resend.webhooks.events.replay({
      webhookId: created!.id,
      eventId,
    });
    expect(replayError).toBeNull();
    expect(replayed).toEqual({ object: 'webhook_event', id: eventId });
    await receiver.waitFor(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(request!.headers['webhook-id']);
    expect(receiver.received[1]!.body).toBe(request!.body);
  });

  it('rotates through the SDK path: both secrets verify during the overlap, new first', async () => {
    const { data: created } = await resend.webhooks.create({ endpoint: receiver.url, events: ['email.sent'] });
    const oldSecret = created!.signing_secret;
    const { data: rotated, error } = await resend.webhooks.rotateSigningSecret(created!.id);
    expect(error).toBeNull();
    expect(rotated!.signing_secret).not.toBe(oldSecret);
    const expiresAt = Date.parse(
      (rotated as unknown as { previous_secret_expires_at: string }).previous_secret_expires_at,
    );
    expect(expiresAt - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    const { data: read } = await resend.webhooks.get(created!.id);
    expect(read!.signing_secret).toBe(rotated!.signing_secret);

    const before = receiver.received.length;
    await sendEmail('rotated');
    // The first endpoint of the earlier test also subscribes to email.sent.
    await receiver.waitFor(before + 2);
    const request = receiver.received
      .slice(before)
      .find((r) => r.headers['webhook-signature']!.toString().includes(' '))!;
    expect(request.headers['webhook-signature']!.toString().split(' ')).toHaveLength(2);
    for (const secret of [rotated!.signing_secret, oldSecret]) {
      expect(
        resend.webhooks.verify({ payload: request.body, headers: svixHeaders(request.headers), webhookSecret: secret }),
      ).toMatchObject({ type: 'email.sent' });
    }
    // New first: the first candidate alone verifies with the new secret.
    const [first] = request.headers['webhook-signature']!.toString().split(' ');
    expect(() =>
      new Webhook(rotated!.signing_secret).verify(request.body, {
        ...(request.headers as Record<string, string>),
        'webhook-signature': first!,
      }),
    ).not.toThrow();
  });

  it('updates and removes an endpoint', async () => {
    const { data: created } = await resend.webhooks.create({ endpoint: receiver.url, events: ['contact.created'] });
    const { data: updated, error } = await resend.webhooks.update(created!.id, {
      events: ['contact.updated'],
      status: 'disabled',
    });
    expect(error).toBeNull();
    expect(updated).toEqual({ object: 'webhook', id: created!.id });
    expect((await resend.webhooks.get(created!.id)).data).toMatchObject({
      events: ['contact.updated'],
      status: 'disabled',
    });
    const { data: removed } = await resend.webhooks.remove(created!.id);
    expect(removed).toEqual({ object: 'webhook', id: created!.id, deleted: true });
    expect((await resend.webhooks.get(created!.id)).error).toMatchObject({ name: 'not_found' });
  });
});
