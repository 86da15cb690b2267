import { untilFound } from '../../support/until.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../server/db/ids.js';
import { initOrm } from '../../../server/db/orm.js';
import { ReturnPaths } from '../../../server/services/inbound/return-path.js';
import { type InboundListener, startInboundListener } from '../../../server/services/inbound/listener.js';
import { queryDatabase } from '../../support/db.js';
import { dsnReport } from '../../support/dsn-report.js';
import { smtpConnect } from '../../support/smtp-client.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const BOUNCE_DOMAIN = 'bounces.verp.test';
const DOMAIN = `verp-${Math.random().toString(36).slice(2, 8)}.test`;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let receiver: WebhookReceiver;
let listener: InboundListener;
let signingSecret: string;
const log: string[] = [];

beforeAll(async () => {
  sink = await startSmtpSink();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await sink?.close();
  await receiver?.close();
});
const app = useTestApp(() => ({
  jobs: 'worker',
  env: {
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['eu-west-1'] }]),
    POSTLANE_BOUNCE_DOMAIN: BOUNCE_DOMAIN,
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    POSTLANE_LOG_LEVEL: 'info',
  },
  logDestination: { write: (line) => log.push(line) },
  team: { verifiedDomains: [DOMAIN] },
}));
beforeAll(async () => {
  const hook = await app.request('POST', '/webhooks', {
    token: app.token,
    body: { endpoint: receiver.url, events: ['email.bounced'] },
  });
  expect(hook.status).toBe(201);
  signingSecret = hook.body.signing_secret;
  listener = await startInboundListener(app.deps, { host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await listener?.close();
});

/** Sends through the API and waits (bounded) for the relay to have it and the send to be recorded, as a bounce would find it. */
async function sendAndRelay(to: string[]) {
  const sent = await app.request('POST', '/emails', {
    token: app.token,
    body: { from: `Shop <news@${DOMAIN}>`, to, subject: 'verp', text: 'hi' },
  });
  expect(sent.status).toBe(200);
  return untilFound(async () => {
    const mail = sink.received.find((m) => m.parsed.messageId?.startsWith(`<${sent.body.id}@`));
    if (mail && (await app.request('GET', `/emails/${sent.body.id}`, { token: app.token })).body.last_event === 'sent')
      return { id: sent.body.id as string, mail };
    return undefined;
  }, 'the email was never relayed and recorded sent');
}

/** Delivers a message to the inbound listener as a reporting MTA does (null reverse path); the RCPT TO and final replies. */
async function deliver(to: string, message: string, port = listener.port) {
  const client = await smtpConnect(port);
  try {
    expect((await client.greeting).code).toBe(220);
    expect((await client.command('EHLO mx.example.net')).code).toBe(250);
    expect((await client.command('MAIL FROM:<>')).code).toBe(250);
    const rcpt = await client.command(`RCPT TO:<${to}>`);
    if (rcpt.code !== 250) return { rcpt: rcpt.code, data: null };
    const data = await client.data(message);
    await client.command('QUIT');
    return { rcpt: rcpt.code, data: data.code };
  } finally {
    client.close();
  }
}

const eventsOf = async (emailId: string) =>
  (
    await queryDatabase<{ type: string }>(
      app.databaseUrl,
      `SELECT type FROM event WHERE email_id = $1 ORDER BY created_at, type`,
      [emailId],
    )
  ).map((e) => e.type);

const verpCount = async (outcome: string) => {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  return Number(
    new RegExp(`postlane_ingested_notifications_total\\{source="verp",outcome="${outcome}"\\} (\\d+)`).exec(
      text,
    )?.[1] ?? 0,
  );
};

describe('bounces through a VERP return path', () => {
  it('relayed mail carries the sealed return path of its email, and a report delivered there by SMTP bounces it as POST /ingest/dsn would, once', async () => {
    const { id, mail } = await sendAndRelay(['gone@example.com', 'fine@example.com']);
    expect(mail.envelope.from).toMatch(new RegExp(`^bounces\\+[a-z2-7]{52}@${BOUNCE_DOMAIN.replace(/\./g, '\\.')}$`));
    expect(ReturnPaths.from(app.deps)!.emailOf(mail.envelope.from)).toBe(id);
    expect(mail.parsed.from?.value[0]?.address).toBe(`news@${DOMAIN}`);

    // No returned headers: the return path alone names the email.
    const report = dsnReport(
      null,
      [
        {
          address: 'gone@example.com',
          action: 'failed',
          status: '5.1.1',
          diagnostic: '550 5.1.1 <gone@example.com>: User unknown',
        },
      ],
      undefined,
      mail.envelope.from,
    );
    const before = { applied: await verpCount('applied'), duplicate: await verpCount('duplicate') };
    expect(await deliver(mail.envelope.from, report)).toEqual({ rcpt: 250, data: 250 });
    expect(await deliver(mail.envelope.from.toUpperCase(), report)).toEqual({ rcpt: 250, data: 250 });
    expect({
      applied: (await verpCount('applied')) - before.applied,
      duplicate: (await verpCount('duplicate')) - before.duplicate,
    }).toEqual({ applied: 1, duplicate: 1 });

    expect(await eventsOf(id)).toEqual(['email.sent', 'email.bounced']);
    const suppressions = await app.request('GET', '/suppressions?origin=bounce', { token: app.token });
    expect(suppressions.body.data.map((s: { email: string }) => s.email)).toEqual(['gone@example.com']);
    await receiver.waitFor(1);
    const [delivery] = receiver.received.map(
      (r) =>
        new Webhook(signingSecret).verify(r.body, r.headers as Record<string, string>) as {
          type: string;
          data: { email_id: string; bounce: unknown };
        },
    );
    expect(delivery).toMatchObject({
      type: 'email.bounced',
      data: {
        email_id: id,
        bounce: { type: 'Permanent', diagnosticCode: ['smtp; 550 5.1.1 <gone@example.com>: User unknown'] },
      },
    });
    const [row] = await queryDatabase<{ n: number }>(
      app.databaseUrl,
      `SELECT count(*)::int AS n FROM webhook_delivery d JOIN event e ON e.id = d.event_id WHERE e.email_id = $1`,
      [id],
    );
    expect(row!.n).toBe(1);
  });

  it('drops a forged return path, one of an email not kept, and a message that is not a report after accepting them, with a log line and a metric, recording nothing', async () => {
    const { id, mail } = await sendAndRelay(['kept@example.com']);
    const at = 'bounces+'.length + 10;
    const forged = `${mail.envelope.from.slice(0, at)}${mail.envelope.from[at] === 'a' ? 'b' : 'a'}${mail.envelope.from.slice(at + 1)}`;
    const failure = [{ address: 'kept@example.com', action: 'failed', status: '5.1.1' }];
    const before = { dropped: await verpCount('dropped'), applied: await verpCount('applied') };
    // Accepted either way: the sender is never told which tokens are good, and no bounce of a bounce goes out.
    expect(await deliver(forged, dsnReport(null, failure))).toEqual({ rcpt: 250, data: 250 });
    expect(await deliver(ReturnPaths.from(app.deps)!.forEmail(newId()), dsnReport(null, failure))).toEqual({
      rcpt: 250,
      data: 250,
    });
    expect(
      await deliver(
        mail.envelope.from,
        'From: someone@example.org\r\nSubject: Out of office\r\n\r\nAway until Monday.\r\n',
      ),
    ).toEqual({ rcpt: 250, data: 250 });
    expect({
      dropped: (await verpCount('dropped')) - before.dropped,
      applied: (await verpCount('applied')) - before.applied,
    }).toEqual({ dropped: 3, applied: 0 });
    expect(await eventsOf(id)).toEqual(['email.sent']);
    const dropped = log.filter((line) => line.includes('bounce message dropped'));
    expect(dropped.map((line) => JSON.parse(line).outcome)).toEqual([
      'forged or foreign return path',
      'no matching email',
      'not a delivery status notification',
    ]);
    for (const line of dropped) expect(line).not.toMatch(/@/);
  });

  it('refuses at RCPT TO any other address of the bounce domain, and stores no report as received mail', async () => {
    expect(await deliver(`bounces@${BOUNCE_DOMAIN}`, dsnReport(null, []))).toEqual({ rcpt: 550, data: null });
    expect(await deliver(`bounces+${'a'.repeat(51)}@${BOUNCE_DOMAIN}`, dsnReport(null, []))).toEqual({
      rcpt: 550,
      data: null,
    });
    const [row] = await queryDatabase<{ n: number }>(
      app.databaseUrl,
      'SELECT count(*)::int AS n FROM received_email',
      [],
    );
    expect(row!.n).toBe(0);
  });

  it('answers 451 while the database is away, so the reporting MTA tries again, and the retry is recorded once', async () => {
    const { id, mail } = await sendAndRelay(['later@example.com']);
    const report = dsnReport(null, [{ address: 'later@example.com', action: 'failed', status: '5.1.1' }]);
    // The same listener over a database nothing answers for (connection refused).
    const away = await initOrm(
      { ...app.config, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postlane' },
      { connect: false, pool: { min: 0, max: 1 } },
    );
    const outage = await startInboundListener({ ...app.deps, orm: away }, { host: '127.0.0.1', port: 0 });
    try {
      expect(await deliver(mail.envelope.from, report, outage.port)).toEqual({ rcpt: 250, data: 451 });
      // Recognised as an outage, not logged as a failure of ours.
      expect(log.filter((line) => line.includes('inbound message failed'))).toEqual([]);
    } finally {
      await outage.close();
      await away.close();
    }
    expect(await eventsOf(id)).toEqual(['email.sent']);
    expect(await deliver(mail.envelope.from, report)).toEqual({ rcpt: 250, data: 250 });
    expect(await eventsOf(id)).toEqual(['email.sent', 'email.bounced']);
  });
  it('applies a report only to addresses the email went to: a guessed address gets no suppression, and a report naming none of them records nothing (issue 33, 6)', async () => {
    const { id, mail } = await sendAndRelay(['mine@example.com', 'cosent@example.com']);
    const before = { dropped: await verpCount('dropped'), applied: await verpCount('applied') };
    // Naming nobody on the email, with text of the sender's choosing: before, an email.bounced with `known` false.
    const nobody = dsnReport(null, [
      { address: 'stranger@example.com', action: 'failed', status: '5.1.1', diagnostic: '550 attacker text' },
    ]);
    expect(await deliver(mail.envelope.from, nobody)).toEqual({ rcpt: 250, data: 250 });
    expect(await eventsOf(id)).toEqual(['email.sent']);
    // A guessed Bcc-like address beside a real recipient: only the real one is suppressed.
    const guessed = dsnReport(null, [
      { address: 'guessed-bcc@example.com', action: 'failed', status: '5.1.1' },
      { address: 'Cosent@example.com', action: 'failed', status: '5.1.1' },
    ]);
    expect(await deliver(mail.envelope.from, guessed)).toEqual({ rcpt: 250, data: 250 });
    expect(await eventsOf(id)).toEqual(['email.sent', 'email.bounced']);
    const suppressed = (await app.request('GET', '/suppressions?origin=bounce', { token: app.token })).body.data.map(
      (row: { email: string }) => row.email,
    );
    expect(suppressed).toContain('cosent@example.com');
    expect(suppressed).not.toContain('guessed-bcc@example.com');
    expect(suppressed).not.toContain('stranger@example.com');
    expect({
      dropped: (await verpCount('dropped')) - before.dropped,
      applied: (await verpCount('applied')) - before.applied,
    }).toEqual({ dropped: 1, applied: 1 });
  });
});
