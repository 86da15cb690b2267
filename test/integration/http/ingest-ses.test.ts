import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Email } from '../../../server/entities/index.js';
import { SnsVerifier } from '../../../server/services/provider-reports/sns.js';
import { queryDatabase } from '../../support/db.js';
import { CERT_URL, type FakeSns, SNS_HOST, startFakeSns } from '../../support/fake-sns.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const OTHER_TOPIC = 'arn:aws:sns:us-east-1:123456789012:someone-else';
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36';

let sns: FakeSns;
let receiver: WebhookReceiver;
let secret: string;

beforeAll(async () => {
  [sns, receiver] = await Promise.all([startFakeSns(), startWebhookReceiver()]);
});
afterAll(() => Promise.all([sns?.close(), receiver?.close()]));
const app = useTestApp({
  jobs: 'worker',
  env: {
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    POSTLANE_SNS_TOPIC_ARNS: TOPIC,
    POSTLANE_INGEST_BODY_LIMIT_KB: '16',
  },
});
beforeAll(async () => {
  // The production verifier, with HTTPS to SNS's host names routed to the fake SNS (which it trusts).
  app.deps.sns = new SnsVerifier(app.config.POSTLANE_SNS_TOPIC_ARNS, sns.agent);

  const hook = await app.request('POST', '/webhooks', {
    token: app.token,
    body: { endpoint: receiver.url, events: ['*'] },
  });
  secret = hook.body.signing_secret;
});

const load = (id: string) => app.run(() => app.deps.orm.em.findOneOrFail(Email, id));

/** Sends through the API and waits for the worker to hand it to the provider. */
async function sentEmail(to: string | string[] = `r${Math.random().toString(36).slice(2, 8)}@example.com`) {
  const res = await app.request('POST', '/emails', {
    token: app.token,
    body: { from: 'a@acme.test', to, subject: 'ingest', text: 'hi' },
  });
  expect(res.status).toBe(200);
  await until(async () => (await load(res.body.id)).status === 'sent');
  return load(res.body.id);
}

const sesMessage = (
  email: { id: string; providerMessageId?: string | null },
  eventType: string,
  extra: Record<string, unknown> = {},
  { tagged = true } = {},
) =>
  JSON.stringify({
    eventType,
    mail: {
      timestamp: new Date().toISOString(),
      messageId: email.providerMessageId,
      ...(tagged ? { tags: { email_id: [email.id], 'ses:configuration-set': ['postlane'] } } : {}),
    },
    ...extra,
  });

const notification = (message: string, fields: Record<string, string> = {}, options?: { version: '1' | '2' }) =>
  sns.sign({ Type: 'Notification', TopicArn: TOPIC, Message: message, ...fields }, options);

async function post(body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type: Record<string, string> =
    typeof body === 'object' && body && 'Type' in body
      ? { 'x-amz-sns-message-type': String((body as { Type: string }).Type) }
      : {};
  const response = await fetch(`${app.url}/ingest/ses`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain; charset=UTF-8', ...type, ...headers },
    body: text,
  });
  return { status: response.status, body: await response.json() };
}

/** The email's events and their webhook deliveries (the outbox rows: deterministic, unlike waiting for silence). */
const eventsOf = (emailId: string) =>
  queryDatabase<{ type: string; deliveries: number }>(
    app.databaseUrl,
    `SELECT e.type, count(d.id)::int AS deliveries FROM event e LEFT JOIN webhook_delivery d ON d.event_id = e.id WHERE e.email_id = $1 GROUP BY e.id, e.type, e.created_at ORDER BY e.created_at, e.type`,
    [emailId],
  );

/** The webhooks the receiver got for one email, each verified with standardwebhooks. */
async function webhooksFor(emailId: string, count: number) {
  const matching = () => receiver.received.filter((r) => JSON.parse(r.body).data?.email_id === emailId);
  await until(async () => matching().length >= count);
  return matching().map(
    (r) =>
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
        type: string;
        data: Record<string, unknown>;
      },
  );
}

describe('POST /ingest/ses', () => {
  it('records a delivery and delivers email.delivered, signed', async () => {
    const email = await sentEmail();
    const res = await post(
      notification(
        sesMessage(email, 'Delivery', { delivery: { timestamp: new Date().toISOString(), recipients: email.to } }),
      ),
    );
    expect(res).toEqual({ status: 200, body: { received: true } });
    expect((await load(email.id)).lastEvent).toBe('delivered');
    const hooks = await webhooksFor(email.id, 2);
    expect(hooks.map((h) => h.type)).toEqual(['email.sent', 'email.delivered']);
    expect(hooks[1]!.data).toMatchObject({ email_id: email.id, to: email.to, subject: 'ingest' });
  });

  it('applies a message SNS delivers twice, even at once, one time: one event, one webhook', async () => {
    const email = await sentEmail();
    const message = notification(
      sesMessage(email, 'DeliveryDelay', {
        deliveryDelay: { delayType: 'MailboxFull', timestamp: new Date().toISOString() },
      }),
    );
    const answers = await Promise.all([post(message), post(message), post(message)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await eventsOf(email.id)).toEqual([
      { type: 'email.sent', deliveries: 1 },
      { type: 'email.delivery_delayed', deliveries: 1 },
    ]);
    expect((await load(email.id)).lastEvent).toBe('delivery_delayed');
  });

  it('turns a permanent bounce into email.bounced with data.bounce and a bounce suppression; the next send to the address is refused', async () => {
    const email = await sentEmail('gone@example.com');
    const bounce = {
      bounceType: 'Permanent',
      bounceSubType: 'General',
      timestamp: new Date().toISOString(),
      bouncedRecipients: [
        { emailAddress: 'gone@example.com', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
      ],
    };
    expect((await post(notification(sesMessage(email, 'Bounce', { bounce })))).status).toBe(200);
    expect((await load(email.id)).lastEvent).toBe('bounced');
    const [, bounced] = await webhooksFor(email.id, 2);
    expect(bounced).toMatchObject({
      type: 'email.bounced',
      data: {
        bounce: {
          type: 'Permanent',
          subType: 'General',
          message: 'smtp; 550 5.1.1 user unknown',
          diagnosticCode: ['smtp; 550 5.1.1 user unknown'],
        },
      },
    });

    const suppressions = await app.request('GET', '/suppressions?origin=bounce', { token: app.token });
    expect(suppressions.body.data).toEqual([
      expect.objectContaining({ email: 'gone@example.com', origin: 'bounce', source_id: email.id }),
    ]);
    await until(async () => receiver.received.some((r) => JSON.parse(r.body).type === 'suppression.added'));
    const added = receiver.received.map((r) => JSON.parse(r.body)).find((b) => b.type === 'suppression.added');
    expect(added.data).toMatchObject({ email: 'gone@example.com', origin: 'bounce', source: null });

    const again = await app.request('POST', '/emails', {
      token: app.token,
      body: { from: 'a@acme.test', to: 'gone@example.com', subject: 'again', text: 'hi' },
    });
    expect(again.status).toBe(422);
    expect(again.body.name).toBe('all_recipients_suppressed');
    const mixed = await app.request('POST', '/emails', {
      token: app.token,
      body: { from: 'a@acme.test', to: ['gone@example.com', 'still@example.com'], subject: 'mixed', text: 'hi' },
    });
    expect(mixed.status).toBe(200);
    expect((await load(mixed.body.id)).to).toEqual(['still@example.com']);
  });

  it('announces a bounce and a complaint once per email and recipient: later reports of them (new notification ids, at once or later) are copies', async () => {
    const [gone, other] = [
      `gone-${Math.random().toString(36).slice(2, 8)}@example.com`,
      `other-${Math.random().toString(36).slice(2, 8)}@example.com`,
    ];
    const email = await sentEmail([gone, other]);
    const at = (s: number) => new Date(Date.parse(email.createdAt.toISOString()) + s * 1000).toISOString();
    const bounce = (address: string, s: number) =>
      notification(
        sesMessage(email, 'Bounce', {
          bounce: {
            bounceType: 'Permanent',
            bounceSubType: 'General',
            timestamp: at(s),
            bouncedRecipients: [
              { emailAddress: address, status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
            ],
          },
        }),
      );
    const complaint = (s: number) =>
      notification(
        sesMessage(email, 'Complaint', {
          complaint: { timestamp: at(s), complainedRecipients: [{ emailAddress: gone.toUpperCase() }] },
        }),
      );

    expect((await Promise.all([post(bounce(gone, 1)), post(bounce(gone, 2))])).map((r) => r.status)).toEqual([
      200, 200,
    ]);
    expect((await post(bounce(gone, 3))).status).toBe(200);
    expect((await post(complaint(4))).status).toBe(200);
    expect((await post(complaint(5))).status).toBe(200);
    // The other recipient's bounce is an outcome of its own.
    expect((await post(bounce(other, 6))).status).toBe(200);
    expect((await post(bounce(other, 7))).status).toBe(200);

    expect(await eventsOf(email.id)).toEqual([
      { type: 'email.sent', deliveries: 1 },
      { type: 'email.bounced', deliveries: 1 },
      { type: 'email.complained', deliveries: 1 },
      { type: 'email.bounced', deliveries: 1 },
    ]);
    const hooks = await webhooksFor(email.id, 4);
    expect(hooks.map((h) => h.type).sort()).toEqual([
      'email.bounced',
      'email.bounced',
      'email.complained',
      'email.sent',
    ]);
    expect((await load(email.id)).lastEvent).toBe('bounced');
  });

  it('keeps a transient bounce on the email without a webhook or a suppression', async () => {
    const email = await sentEmail('full@example.com');
    const bounce = {
      bounceType: 'Transient',
      bounceSubType: 'MailboxFull',
      bouncedRecipients: [{ emailAddress: 'full@example.com', diagnosticCode: 'smtp; 452 4.2.2 mailbox full' }],
    };
    expect((await post(notification(sesMessage(email, 'Bounce', { bounce })))).status).toBe(200);
    expect(await eventsOf(email.id)).toEqual([
      { type: 'email.sent', deliveries: 1 },
      { type: 'email.soft_bounced', deliveries: 0 },
    ]);
    expect((await load(email.id)).lastEvent).toBe('sent');
    expect(
      (await app.request('GET', '/suppressions', { token: app.token })).body.data.map(
        (s: { email: string }) => s.email,
      ),
    ).not.toContain('full@example.com');
  });

  it('turns a complaint into email.complained and a complaint suppression, matching by SES MessageId when the tag is missing', async () => {
    const email = await sentEmail('angry@example.com');
    const complaint = {
      complaintFeedbackType: 'abuse',
      complainedRecipients: [{ emailAddress: 'angry@example.com' }],
      timestamp: new Date().toISOString(),
    };
    expect((await post(notification(sesMessage(email, 'Complaint', { complaint }, { tagged: false })))).status).toBe(
      200,
    );
    expect((await load(email.id)).lastEvent).toBe('complained');
    const hooks = await webhooksFor(email.id, 2);
    expect(hooks[1]!.type).toBe('email.complained');
    const suppressions = await app.request('GET', '/suppressions?origin=complaint', { token: app.token });
    expect(suppressions.body.data.map((s: { email: string }) => s.email)).toContain('angry@example.com');
  });

  it('records opens and clicks with data.open and data.click; a click with no open before it also records an open with reason click', async () => {
    const email = await sentEmail();
    // A person reads it minutes after it went out (a fetch within seconds of that is a machine's).
    await queryDatabase(app.databaseUrl, `UPDATE email SET sent_at = now() - interval '10 minutes' WHERE id = $1`, [
      email.id,
    ]);
    const at = new Date();
    const click = {
      ipAddress: '198.51.100.7',
      userAgent: CHROME,
      link: 'https://acme.test/offer',
      timestamp: at.toISOString(),
    };
    expect((await post(notification(sesMessage(email, 'Click', { click })))).status).toBe(200);
    const hooks = await webhooksFor(email.id, 3);
    expect(hooks.slice(1)).toEqual([
      expect.objectContaining({
        type: 'email.opened',
        data: expect.objectContaining({
          open: {
            ipAddress: '198.51.100.7',
            userAgent: CHROME,
            timestamp: new Date(at.getTime() - 1).toISOString(),
            reason: 'click',
          },
        }),
      }),
      expect.objectContaining({ type: 'email.clicked', data: expect.objectContaining({ click }) }),
    ]);
    expect((await load(email.id)).lastEvent).toBe('clicked');

    const open = {
      ipAddress: '198.51.100.8',
      userAgent: CHROME,
      timestamp: new Date(at.getTime() + 1000).toISOString(),
    };
    expect((await post(notification(sesMessage(email, 'Open', { open }), {}, { version: '1' }))).status).toBe(200);
    const after = await webhooksFor(email.id, 4);
    expect(after[3]).toMatchObject({ type: 'email.opened', data: { open } });
  });

  it('judges SES opens and clicks by the machine rules: Apple’s privacy proxy and a fetch on delivery are email.prefetched', async () => {
    const email = await sentEmail();
    const at = new Date().toISOString();
    await post(
      notification(
        sesMessage(email, 'Open', { open: { ipAddress: '17.58.0.1', userAgent: 'Mozilla/5.0', timestamp: at } }),
      ),
    );
    await post(
      notification(
        sesMessage(email, 'Click', {
          click: { ipAddress: '198.51.100.7', userAgent: CHROME, link: 'https://acme.test/offer', timestamp: at },
        }),
      ),
    );
    const stored = await queryDatabase<{ type: string; reason: string }>(
      app.databaseUrl,
      `SELECT type, coalesce(payload->'open'->>'reason', payload->'click'->>'reason') AS reason FROM event WHERE email_id = $1 AND type <> 'email.sent' ORDER BY type, reason`,
      [email.id],
    );
    // Both carry the same time: which row comes first is not what this checks.
    expect(stored).toEqual([
      { type: 'email.prefetched', reason: 'on_delivery' },
      { type: 'email.prefetched', reason: 'privacy_proxy' },
    ]);
    expect((await load(email.id)).lastEvent).toBe('sent');
  });

  it('marks a rejected message failed without a webhook, and does not repeat email.sent for SES’s Send', async () => {
    const email = await sentEmail();
    expect((await post(notification(sesMessage(email, 'Send')))).status).toBe(200);
    expect((await post(notification(sesMessage(email, 'Reject', { reject: { reason: 'Bad content' } })))).status).toBe(
      200,
    );
    expect(await eventsOf(email.id)).toEqual([
      { type: 'email.sent', deliveries: 1 },
      { type: 'email.failed', deliveries: 0 },
    ]);
    expect((await load(email.id)).lastEvent).toBe('failed');
  });
});

describe('SNS signing certificates', () => {
  it('are downloaded once per URL, and a URL that serves none makes the message untrusted', async () => {
    const email = await sentEmail();
    await post(notification(sesMessage(email, 'Delivery')));
    expect(sns.requests.filter((r) => r.path === new URL(CERT_URL).pathname)).toHaveLength(1);
    const missing = `https://${SNS_HOST}/SimpleNotificationService-ffff.pem`;
    const res = await post(notification(sesMessage(email, 'Complaint'), { SigningCertURL: missing }));
    expect(res).toMatchObject({ status: 403, body: { name: 'untrusted_notification' } });
    expect(sns.requests.at(-1)).toEqual({ path: '/SimpleNotificationService-ffff.pem', host: SNS_HOST });
    expect(await eventsOf(email.id)).toEqual([
      { type: 'email.sent', deliveries: 1 },
      { type: 'email.delivered', deliveries: 1 },
    ]);
  });
});

describe('POST /ingest/ses refuses what SNS did not send, and changes nothing', () => {
  const refusals: [string, () => unknown, number, string][] = [];
  let email: Awaited<ReturnType<typeof sentEmail>>;
  beforeAll(async () => {
    email = await sentEmail();
  });
  const delivery = () => sesMessage(email, 'Delivery');
  refusals.push(
    [
      'a forged signature',
      () => ({ ...notification(delivery()), Message: sesMessage(email, 'Complaint') }),
      403,
      'untrusted_notification',
    ],
    [
      'a signature of another message',
      () => ({ ...notification(delivery()), Signature: notification('x').Signature }),
      403,
      'untrusted_notification',
    ],
    [
      'a topic not configured',
      () => sns.sign({ Type: 'Notification', TopicArn: OTHER_TOPIC, Message: delivery() }),
      403,
      'untrusted_notification',
    ],
    [
      'a certificate off SNS’s hosts',
      () =>
        notification(delivery(), { SigningCertURL: 'https://evil.example.com/SimpleNotificationService-0123abcd.pem' }),
      403,
      'untrusted_notification',
    ],
    [
      'a look-alike SNS host',
      () =>
        notification(delivery(), {
          SigningCertURL: `https://${SNS_HOST}.evil.example.com/SimpleNotificationService-0123abcd.pem`,
        }),
      403,
      'untrusted_notification',
    ],
    [
      'a certificate over http',
      () => notification(delivery(), { SigningCertURL: CERT_URL.replace('https:', 'http:') }),
      403,
      'untrusted_notification',
    ],
    [
      'a certificate at another path',
      () => notification(delivery(), { SigningCertURL: `https://${SNS_HOST}/cert.pem` }),
      403,
      'untrusted_notification',
    ],
    [
      'a genuine message too old to be remembered',
      () => notification(delivery(), { Timestamp: new Date(Date.now() - 15 * 86_400_000).toISOString() }),
      403,
      'untrusted_notification',
    ],
    ['a body that is not JSON', () => 'Type=Notification', 400, 'invalid_notification'],
    ['JSON without the SNS fields', () => ({ Type: 'Notification', Message: delivery() }), 400, 'invalid_notification'],
    [
      'an unknown signature version',
      () => ({ ...notification(delivery()), SignatureVersion: '3' }),
      400,
      'invalid_notification',
    ],
    [
      'a header type that disagrees',
      () => ({ ...notification(delivery()), __header: 'SubscriptionConfirmation' }),
      400,
      'invalid_notification',
    ],
    [
      'an oversize body',
      () => ({ ...notification(delivery()), Padding: 'x'.repeat(20 * 1024) }),
      413,
      'validation_error',
    ],
  );
  for (const [what, body, status, name] of refusals) {
    it(`refuses ${what} with ${status}`, async () => {
      const before = sns.requests.length;
      const built = body() as Record<string, string>;
      const header: Record<string, string> =
        typeof built === 'object' && built.__header ? { 'x-amz-sns-message-type': built.__header } : {};
      if (typeof built === 'object') delete built.__header;
      const res = await post(built, header);
      expect(res).toEqual({ status, body: { statusCode: status, name, message: expect.any(String) } });
      expect(await eventsOf(email.id)).toEqual([{ type: 'email.sent', deliveries: 1 }]);
      expect((await load(email.id)).lastEvent).toBe('sent');
      // Nothing fetched except, at most, SNS's own certificate (cached after the first time).
      expect(sns.requests.slice(before).every((r) => r.path === new URL(CERT_URL).pathname)).toBe(true);
    });
  }
});

describe('SNS subscriptions', () => {
  const confirmation = (topic: string, subscribeUrl: string) =>
    sns.sign({
      Type: 'SubscriptionConfirmation',
      TopicArn: topic,
      Token: 'tok123',
      Message: 'You have chosen to subscribe…',
      SubscribeURL: subscribeUrl,
    });
  const confirmUrl = `https://${SNS_HOST}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(TOPIC)}&Token=tok123`;

  it('confirms a subscription to a configured topic by GETting its SubscribeURL on SNS', async () => {
    const res = await post(confirmation(TOPIC, confirmUrl));
    expect(res.status).toBe(200);
    expect(sns.requests.filter((r) => r.path.startsWith('/?Action=ConfirmSubscription'))).toEqual([
      { path: new URL(confirmUrl).pathname + new URL(confirmUrl).search, host: SNS_HOST },
    ]);
  });

  it('never confirms another topic, nor fetches a SubscribeURL off SNS’s hosts', async () => {
    const before = sns.requests.length;
    expect((await post(confirmation(OTHER_TOPIC, confirmUrl))).status).toBe(403);
    const offHost = await post(
      confirmation(TOPIC, 'https://169.254.169.254/latest/meta-data/?Action=ConfirmSubscription'),
    );
    expect(offHost).toMatchObject({ status: 403, body: { name: 'untrusted_notification' } });
    expect(sns.requests.slice(before).filter((r) => r.path.includes('ConfirmSubscription'))).toEqual([]);
  });
});
