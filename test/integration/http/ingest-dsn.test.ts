import { describe, expect, it } from 'vitest';
import { Email } from '../../../server/entities/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { queryDatabase } from '../../support/db.js';
import { dsnReport } from '../../support/dsn-report.js';
import { useTestApp } from '../../support/test-app.js';

const TOKEN = 'dsn-token-0123456789abcdef0123456789abcdef';

const app = useTestApp({ env: { POSTLANE_DSN_TOKEN: TOKEN, POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });

async function sentEmail(to: string[]) {
  const res = await app.request('POST', '/emails', {
    token: app.token,
    body: { from: 'a@acme.test', to, subject: 'dsn', text: 'hi' },
  });
  expect(res.status).toBe(200);
  await app.run(async () =>
    deliverDue(app.deps, (await app.deps.orm.em.findOneOrFail(Email, res.body.id)).region, [res.body.id]),
  );
  return app.run(() => app.deps.orm.em.findOneOrFail(Email, res.body.id));
}

async function post(body: string, auth: string | null = TOKEN) {
  const response = await fetch(`${app.url}/ingest/dsn`, {
    method: 'POST',
    headers: { 'content-type': 'message/rfc822', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
    body,
  });
  return { status: response.status, body: await response.json() };
}

const eventsOf = async (emailId: string) =>
  (
    await queryDatabase<{ type: string; payload: Record<string, unknown> }>(
      app.databaseUrl,
      `SELECT type, payload FROM event WHERE email_id = $1 ORDER BY created_at, type`,
      [emailId],
    )
  ).map((e) => e.type);

describe('POST /ingest/dsn', () => {
  it('turns a 5.x.x failure into email.bounced and a suppression of that recipient only, once', async () => {
    const email = await sentEmail(['gone@example.com', 'fine@example.com']);
    const body = dsnReport(email.messageId, [
      {
        address: 'gone@example.com',
        action: 'failed',
        status: '5.1.1',
        diagnostic: '550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown',
      },
    ]);
    expect(await post(body)).toEqual({ status: 200, body: { received: true } });
    expect(await post(body)).toEqual({ status: 200, body: { received: true } });
    expect(await eventsOf(email.id)).toEqual(['email.sent', 'email.bounced']);
    const [bounced] = await queryDatabase<{ payload: { bounce: unknown } }>(
      app.databaseUrl,
      `SELECT payload FROM event WHERE email_id = $1 AND type = 'email.bounced'`,
      [email.id],
    );
    expect(bounced!.payload.bounce).toEqual({
      type: 'Permanent',
      subType: 'General',
      message: 'smtp; 550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown',
      diagnosticCode: ['smtp; 550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown'],
      class: 'invalid_recipient',
    });
    const suppressions = await app.request('GET', '/suppressions?origin=bounce', { token: app.token });
    expect(suppressions.body.data.map((s: { email: string }) => s.email)).toEqual(['gone@example.com']);
    expect((await app.run(() => app.deps.orm.em.findOneOrFail(Email, email.id))).lastEvent).toBe('bounced');
  });

  it('announces a bounce once: another report of it (its own Message-ID) is a copy, nothing recorded or delivered again', async () => {
    // Deliveries are outbox rows (this app runs no worker): one row per announcement, none sent.
    const hook = await app.request('POST', '/webhooks', {
      token: app.token,
      body: { endpoint: 'http://127.0.0.1:9/dsn', events: ['email.bounced'] },
    });
    expect(hook.status).toBe(201);
    const email = await sentEmail(['twice@example.com']);
    const failure = [
      {
        address: 'twice@example.com',
        action: 'failed',
        status: '5.1.1',
        diagnostic: '550 5.1.1 <twice@example.com>: User unknown',
      },
    ];
    expect(await post(dsnReport(email.messageId, failure))).toEqual({ status: 200, body: { received: true } });
    expect(await post(dsnReport(email.messageId, failure))).toEqual({ status: 200, body: { received: true } });
    expect(await eventsOf(email.id)).toEqual(['email.sent', 'email.bounced']);
    const [row] = await queryDatabase<{ n: number }>(
      app.databaseUrl,
      `SELECT count(*)::int AS n FROM webhook_delivery d JOIN event e ON e.id = d.event_id WHERE e.email_id = $1`,
      [email.id],
    );
    expect(row!.n).toBe(1);
    await app.request('DELETE', `/webhooks/${hook.body.id}`, { token: app.token });
  });

  it('records a delay and a soft failure without suppressing', async () => {
    const email = await sentEmail(['slow@example.com']);
    expect(
      (await post(dsnReport(email.messageId, [{ address: 'slow@example.com', action: 'delayed', status: '4.4.1' }])))
        .status,
    ).toBe(200);
    expect(
      (await post(dsnReport(email.messageId, [{ address: 'slow@example.com', action: 'failed', status: '4.2.2' }])))
        .status,
    ).toBe(200);
    expect(await eventsOf(email.id)).toEqual(['email.sent', 'email.delivery_delayed', 'email.soft_bounced']);
    const [delayed] = await queryDatabase<{ payload: { delay: unknown } }>(
      app.databaseUrl,
      `SELECT payload FROM event WHERE email_id = $1 AND type = 'email.delivery_delayed'`,
      [email.id],
    );
    expect(delayed!.payload.delay).toEqual({ message: '4.4.1', class: expect.any(String) });
    const suppressions = await app.request('GET', '/suppressions', { token: app.token });
    expect(suppressions.body.data.map((s: { email: string }) => s.email)).not.toContain('slow@example.com');
  });

  it('ignores a report about a message that is not ours', async () => {
    const email = await sentEmail(['other@example.com']);
    // Another first character (one Message-ID in 16 already starts with 0).
    const forged = email.messageId.replace(/^<([0-9a-f])/, (_, first: string) => `<${first === '0' ? '1' : '0'}`);
    expect(
      (await post(dsnReport(forged, [{ address: 'other@example.com', action: 'failed', status: '5.1.1' }]))).status,
    ).toBe(200);
    expect(
      (
        await post(
          dsnReport('<someone-else@example.org>', [
            { address: 'other@example.com', action: 'failed', status: '5.1.1' },
          ]),
        )
      ).status,
    ).toBe(200);
    expect(await eventsOf(email.id)).toEqual(['email.sent']);
  });

  it('needs the token, and a delivery status report', async () => {
    const email = await sentEmail(['x@example.com']);
    const body = dsnReport(email.messageId, [{ address: 'x@example.com', action: 'failed', status: '5.1.1' }]);
    expect(await post(body, null)).toMatchObject({ status: 401, body: { name: 'missing_api_key' } });
    expect(await post(body, 'wrong-token-0123456789abcdef0123456789ab')).toMatchObject({
      status: 403,
      body: { name: 'invalid_api_key' },
    });
    expect(await post('From: a@b.co\r\nSubject: hi\r\n\r\nnot a report')).toMatchObject({
      status: 400,
      body: { name: 'invalid_notification' },
    });
    expect(await eventsOf(email.id)).toEqual(['email.sent']);
  });

  it('counts what it applied, dropped as a copy and refused, for /metrics', async () => {
    const counts = async () => {
      const text = await (await fetch(`${app.url}/metrics`)).text();
      return Object.fromEntries(
        ['applied', 'duplicate', 'refused'].map((outcome) => [
          outcome,
          Number(
            new RegExp(`postlane_ingested_notifications_total\\{source="dsn",outcome="${outcome}"\\} (\\d+)`).exec(
              text,
            )?.[1] ?? 0,
          ),
        ]),
      );
    };
    const before = await counts();
    const email = await sentEmail(['counted@example.com']);
    const body = dsnReport(email.messageId, [{ address: 'counted@example.com', action: 'delivered', status: '2.0.0' }]);
    await post(body);
    await post(body);
    await post(body, null);
    const after = await counts();
    expect({
      applied: after.applied! - before.applied!,
      duplicate: after.duplicate! - before.duplicate!,
      refused: after.refused! - before.refused!,
    }).toEqual({ applied: 1, duplicate: 1, refused: 1 });
  });
});
