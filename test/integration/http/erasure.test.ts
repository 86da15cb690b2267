import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressPattern } from '../../../server/services/erasure/erase-addresses.js';
import { runPendingErasures } from '../../../server/services/erasure/run-pending-erasures.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

let app: TestApp;
const ADDRESS = 'Erin.Target+news@Example.com';
const address = ADDRESS.toLowerCase();

/**
 * Every text column of the schema, by table: either scrubbed by eraseAddresses, or named here with
 * why it never holds a recipient's address. A new table or column fails this until it is decided.
 */
const NEVER_A_RECIPIENT: Record<string, string> = {
  agenda_jobs: 'job rows hold ids only',
  api_key: 'key names and hints',
  broadcast: 'the team’s own broadcasts (recipients are written as emails)',
  contact_property: 'the team’s property definitions',
  contact_topic: 'choices, keyed by contact id',
  domain: 'the team’s sending domains',
  mikro_orm_migrations: 'migration names',
  quota_notice: 'event names',
  deliverability_day: 'counts per team, region and day',
  deliverability_episode: 'metric names and times',
  region_broadcast_pause: 'region and metric names',
  segment: 'segment names and filters written by the team',
  team: 'team settings',
  template: 'the team’s own templates',
  webhook_endpoint: 'the team’s endpoint URLs and sealed secrets',
  topic: 'the team’s topics',
  email_attachment: 'attachments of mail to the address are deleted whole',
  ingested_notification: 'SNS message ids and topic ARNs, no notification content',
};
const SCRUBBED = ['api_log', 'captured_message', 'contact', 'email', 'email_recipient', 'erasure_request', 'event', 'idempotency_key', 'suppression', 'tracking_click', 'webhook_attempt', 'webhook_delivery'];

beforeAll(async () => {
  // Webhook receivers on loopback are allowed, so deliveries (to nobody listening) keep their payloads.
  app = await startTestApp({ jobs: 'worker', env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });
});
afterAll(() => app.close());

describe('erasure', () => {
  it('leaves the address nowhere in a full dump of the database, and keeps it recognisable as suppressed', async () => {
    const { token } = await app.createTeamWithKey();
    const req = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => app.request(method, path, { token, body, headers });
    expect((await req('POST', '/webhooks', { endpoint: 'http://127.0.0.1:9/hook', events: ['*'] })).status).toBe(201);
    const topic = (await req('POST', '/topics', { name: 'News', default_subscription: 'opt_in' })).body.id;
    expect((await req('POST', '/contacts', { email: ADDRESS, first_name: 'Erin' })).status).toBe(201);
    await req('PATCH', `/contacts/${ADDRESS}/topics`, [{ id: topic, subscription: 'opt_out' }]);
    await req('PATCH', `/contacts/${ADDRESS}`, { last_name: 'Target' });
    const sent = await req(
      'POST',
      '/emails',
      {
        from: 'Acme <hello@acme.test>', to: [`Erin Target <${ADDRESS}>`, 'other@example.com'], reply_to: ADDRESS, subject: `Hello ${ADDRESS}`,
        html: `<p>Your address is ${ADDRESS}</p>`, text: `Your address is ${ADDRESS}`, headers: { 'X-Customer': ADDRESS },
        attachments: [{ filename: 'card.txt', content: Buffer.from(`contact: ${ADDRESS}`).toString('base64') }],
      },
      { 'idempotency-key': `welcome-${ADDRESS}` },
    );
    expect(sent.status).toBe(200);
    for (let i = 0; i < 100 && (await req('GET', `/emails/${sent.body.id}`)).body.last_event !== 'sent'; i += 1) await new Promise((r) => setTimeout(r, 100));
    // A followed tracked link that carries the address.
    await app.deps.orm.em.fork().getConnection().execute(
      `INSERT INTO tracking_click (id, created_at, email_id, link, clicked_at, outcome) VALUES (gen_random_uuid(), now(), ?, ?, now(), 'clicked')`,
      [sent.body.id, `https://shop.example/account?email=${ADDRESS}`],
    );
    expect((await req('POST', '/suppressions', { email: ADDRESS })).status).toBe(201);
    expect((await req('GET', `/contacts/${ADDRESS}`)).status).toBe(200);

    const dump = () => execFileSync('pg_dump', ['--data-only', app.databaseUrl], { maxBuffer: 256 * 1024 * 1024 }).toString('utf8').toLowerCase();
    await app.deps.apiLogs.flush();
    expect(dump()).toContain(address);
    const deliveries = await app.deps.orm.em.fork().getConnection().execute<{ n: string }[]>('SELECT count(*) AS n FROM webhook_delivery WHERE body ILIKE ?', [`%${address}%`]);
    expect(Number(deliveries[0]!.n)).toBeGreaterThan(0);

    expect((await req('DELETE', `/contacts/${ADDRESS}?erase=true`)).status).toBe(200);
    await app.deps.apiLogs.flush();
    await app.run(() => runPendingErasures(app.deps));

    const after = dump();
    const leftovers = after.split('\n').filter((line) => line.includes(address) || line.startsWith('copy '));
    expect(leftovers.filter((line) => line.includes(address))).toEqual([]);
    expect(after).not.toContain(address);
    expect(after).not.toContain('erin.target');

    // Only the keyed hash is left: the address is still suppressed, and reads [erased].
    const again = await req('POST', '/emails', { from: 'hello@acme.test', to: ADDRESS, subject: 'x', text: 'x' });
    expect(again.body.name).toBe('all_recipients_suppressed');
    expect((await req('GET', '/suppressions')).body.data[0].email).toBe('[erased]');
    const deleted = await app.deps.orm.em.fork().getConnection().execute<{ payload: { email: string } }[]>(`SELECT payload FROM event WHERE type = 'contact.deleted'`);
    expect(deleted.map((e) => e.payload.email)).toEqual(['[erased]']);
    expect((await req('GET', `/emails/${sent.body.id}`)).body).toMatchObject({ to: ['[erased]', 'other@example.com'], subject: 'Hello [erased]' });
  });

  it('matches an address in any case and after a hyphen, never inside a longer address', async () => {
    const pattern = addressPattern(['ann@example.com']);
    const rows = await app.deps.orm.em.fork().getConnection().execute<{ text: string; hit: boolean }[]>(
      `SELECT t AS text, t ~* ? AS hit FROM jsonb_array_elements_text(?::jsonb) AS t`,
      [pattern, JSON.stringify(['ANN@Example.com', '<ann@example.com>', 'welcome-ann@example.com', 'joann@example.com', 'ann@example.com.au', 'ann@example.community', 'jo.ann@example.com'])],
    );
    expect(Object.fromEntries(rows.map((r) => [r.text, r.hit]))).toEqual({
      'ANN@Example.com': true, '<ann@example.com>': true, 'welcome-ann@example.com': true,
      'joann@example.com': false, 'ann@example.com.au': false, 'ann@example.community': false, 'jo.ann@example.com': false,
    });
  });

  it('without erase, the send log is kept', async () => {
    const { token } = await app.createTeamWithKey();
    await app.request('POST', '/contacts', { token, body: { email: 'kept@example.com' } });
    const sent = await app.request('POST', '/emails', { token, body: { from: 'hello@acme.test', to: 'kept@example.com', subject: 'x', text: 'x' } });
    await app.request('DELETE', '/contacts/kept@example.com', { token });
    await app.run(() => runPendingErasures(app.deps));
    expect((await app.request('GET', `/emails/${sent.body.id}`, { token })).body.to).toEqual(['kept@example.com']);
  });

  it('every text column of the schema is scrubbed or known to hold no recipient address', async () => {
    const rows = await app.deps.orm.em.fork().getConnection().execute<{ table_name: string }[]>(
      `SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = 'public' AND data_type IN ('text', 'jsonb', 'json', 'ARRAY', 'character varying')`,
    );
    const unclassified = rows.map((r) => r.table_name).filter((table) => !SCRUBBED.includes(table) && !(table in NEVER_A_RECIPIENT));
    expect(unclassified).toEqual([]);
  });
});
