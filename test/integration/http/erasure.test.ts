import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { addressPatterns, MIME_ENCODINGS } from '../../../server/services/erasure/address-forms.js';
import { runPendingErasures } from '../../../server/services/erasure/run-pending-erasures.js';
import { SURFACES, UNSCRUBBED } from '../../../server/services/erasure/surfaces.js';
import { sqlQuery } from '../../../server/db/query.js';
import { storeReceivedEmail } from '../../../server/services/inbound/store-received-email.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

const ADDRESS = 'Erin.Target+news@Example.com';
const address = ADDRESS.toLowerCase();

// Webhook receivers on loopback are allowed, so deliveries (to nobody listening) keep their payloads.
const app = useTestApp({ jobs: 'worker', env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });

describe('erasure', () => {
  it('leaves the address nowhere in a full dump of the database, and keeps it recognisable as suppressed', async () => {
    const inbound = `in-${Math.random().toString(36).slice(2, 8)}.test`;
    const { token, teamId } = await app.createTeamWithKey('full_access', { receivingDomains: [inbound] });
    const req = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      app.request(method, path, { token, body, headers });
    expect((await req('POST', '/webhooks', { endpoint: 'http://127.0.0.1:9/hook', events: ['*'] })).status).toBe(201);
    const topic = (await req('POST', '/topics', { name: 'News', default_subscription: 'opt_in' })).body.id;
    expect((await req('POST', '/contacts', { email: ADDRESS, first_name: 'Erin' })).status).toBe(201);
    await req('PATCH', `/contacts/${ADDRESS}/topics`, [{ id: topic, subscription: 'opt_out' }]);
    await req('PATCH', `/contacts/${ADDRESS}`, { last_name: 'Target' });
    const sent = await req(
      'POST',
      '/emails',
      {
        from: 'Acme <hello@acme.test>',
        to: [`Erin Target <${ADDRESS}>`, 'other@example.com'],
        reply_to: ADDRESS,
        subject: `Hello ${ADDRESS}`,
        html: `<p>Your address is ${ADDRESS}</p>`,
        text: `Your address is ${ADDRESS}`,
        headers: { 'X-Customer': ADDRESS },
        attachments: [{ filename: 'card.txt', content: Buffer.from(`contact: ${ADDRESS}`).toString('base64') }],
      },
      { 'idempotency-key': `welcome-${ADDRESS}` },
    );
    expect(sent.status).toBe(200);
    await until(async () => (await req('GET', `/emails/${sent.body.id}`)).body.last_event === 'sent');
    // A followed tracked link that carries the address.
    await app.deps.orm.em
      .fork()
      .getConnection()
      .execute(
        `INSERT INTO tracking_click (id, created_at, email_id, link, clicked_at, outcome) VALUES (gen_random_uuid(), now(), ?, ?, now(), 'clicked')`,
        [sent.body.id, `https://shop.example/account?email=${ADDRESS}`],
      );
    expect((await req('POST', '/suppressions', { email: ADDRESS })).status).toBe(201);
    expect((await req('GET', `/contacts/${ADDRESS}`)).status).toBe(200);
    // Mail received from the address (with an attachment), and one kept raw only, as an unparsable message is.
    const received = [
      `From: Erin <${ADDRESS}>`,
      `To: desk@${inbound}`,
      'Subject: hi',
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'hello',
      '--b',
      'Content-Type: application/octet-stream',
      'Content-Disposition: attachment; filename="a.bin"',
      '',
      'xyz',
      '--b--',
      '',
    ].join('\r\n');
    const envelope = {
      mailFrom: ADDRESS,
      recipients: [`desk@${inbound}`],
      peerIp: '127.0.0.1',
      helo: 'mx.example.com',
    };
    const verdicts = { spf: { result: 'none' }, dkim: [], dmarc: { result: 'none' } };
    await storeReceivedEmail(app.deps, { envelope, raw: Buffer.from(received), verdicts });
    const [rawOnly] = await storeReceivedEmail(app.deps, {
      envelope: { ...envelope, mailFrom: 'someone@else.test' },
      raw: Buffer.from('Subject: x\r\n\r\nhello'),
      verdicts,
    });
    await sqlQuery(
      app.deps.orm.em.fork(),
      `UPDATE received_email SET raw = ?, parse_error = 'unreadable' WHERE id = ?`,
      [Buffer.from(`\x00\xff=?utf-8?Q?${ADDRESS.replace('@', '=40')}?=`, 'latin1'), rawOnly!.id],
    );

    const dump = () =>
      execFileSync('pg_dump', ['--data-only', app.databaseUrl], { maxBuffer: 256 * 1024 * 1024 })
        .toString('utf8')
        .toLowerCase();
    await app.deps.apiLogs.flush();
    expect(dump()).toContain(address);
    const deliveries = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('SELECT count(*) AS n FROM webhook_delivery WHERE body ILIKE ?', [`%${address}%`]);
    expect(Number(deliveries[0]!.n)).toBeGreaterThan(0);

    expect((await req('DELETE', `/contacts/${ADDRESS}?erase=true`)).status).toBe(200);
    await app.deps.apiLogs.flush();
    await app.run(() => runPendingErasures(app.deps));

    const after = dump();
    const leftovers = after.split('\n').filter((line) => line.includes(address) || line.startsWith('copy '));
    expect(leftovers.filter((line) => line.includes(address))).toEqual([]);
    expect(after).not.toContain(address);
    expect(after).not.toContain('erin.target');
    // Received mail holding the address went whole, raw bytes and attachments included.
    const keptReceived = await sqlQuery<{ n: string }>(
      app.deps.orm.em.fork(),
      'SELECT (SELECT count(*) FROM received_email WHERE team_id = ?) + (SELECT count(*) FROM received_attachment) AS n',
      [teamId],
    );
    expect(Number(keptReceived[0]!.n)).toBe(0);

    // Only the keyed hash is left: the address is still suppressed, and reads [erased].
    const again = await req('POST', '/emails', { from: 'hello@acme.test', to: ADDRESS, subject: 'x', text: 'x' });
    expect(again.body.name).toBe('all_recipients_suppressed');
    expect((await req('GET', '/suppressions')).body.data[0].email).toBe('[erased]');
    const deleted = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ payload: { email: string } }[]>(`SELECT payload FROM event WHERE type = 'contact.deleted'`);
    expect(deleted.map((e) => e.payload.email)).toEqual(['[erased]']);
    expect((await req('GET', `/emails/${sent.body.id}`)).body).toMatchObject({
      to: ['[erased]', 'other@example.com'],
      subject: 'Hello [erased]',
    });
  });

  it('matches an address in any case and encoding, after a hyphen or an encoded character, never inside a longer address', async () => {
    const { exact, plain, marker, groups } = addressPatterns(
      ['ann@example.com', 'jörg+news@bücher.example'],
      MIME_ENCODINGS,
    );
    const samples: Record<string, boolean> = {
      'ANN@Example.com': true,
      '<ann@example.com>': true,
      'welcome-ann@example.com': true,
      'joann@example.com': false,
      'ann@example.com.au': false,
      'ann@example.community': false,
      'jo.ann@example.com': false,
      'ann%40example.com': true,
      '%3Cann%40EXAMPLE.com%3E': true,
      '%61%6E%6E%40%65%78%61%6d%70%6c%65%2e%63%6f%6d': true,
      'x\\u0061nn\\u0040example.com': false,
      'ann\\u0040example.com': true,
      'ann\\\\u0040example.com': true,
      '\\nann@example.com': true,
      'a=\r\nnn=40exam=\nple.com': true,
      '=?UTF-8?Q?ann=40example.com?=': true,
      'ann&#64;example.com': true,
      'ann&commat;example&period;com': true,
      'JÖRG+NEWS@BÜCHER.example': true,
      'j%C3%B6rg%2Bnews%40b%C3%BCcher.example': true,
      'jörg news@bücher.example': true,
      'j\\u00f6rg+news@b\\u00FCcher.example': true,
    };
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ text: string; candidate: boolean }[]>(
        `SELECT t AS text, (t ~* ? OR (t ~* ? AND t ~* ?)) AS candidate FROM jsonb_array_elements_text(?::jsonb) AS t`,
        [plain, marker, groups[0], JSON.stringify(Object.keys(samples))],
      );
    const found = Object.fromEntries(rows.map((r) => [r.text, r.candidate]));
    for (const [text, expected] of Object.entries(samples)) {
      exact.lastIndex = 0;
      expect([text, exact.test(text)]).toEqual([text, expected]);
      // Postgres finds a superset: every row the exact pattern rewrites.
      if (expected) expect([text, found[text]]).toEqual([text, true]);
    }
  });

  it('without erase, the send log is kept', async () => {
    const { token } = await app.createTeamWithKey();
    await app.request('POST', '/contacts', { token, body: { email: 'kept@example.com' } });
    const sent = await app.request('POST', '/emails', {
      token,
      body: { from: 'hello@acme.test', to: 'kept@example.com', subject: 'x', text: 'x' },
    });
    await app.request('DELETE', '/contacts/kept@example.com', { token });
    await app.run(() => runPendingErasures(app.deps));
    expect((await app.request('GET', `/emails/${sent.body.id}`, { token })).body.to).toEqual(['kept@example.com']);
  });

  it('every text and json column of the schema is scrubbed or declared free of recipients’ addresses', async () => {
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ table_name: string; column_name: string }[]>(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND data_type IN ('text', 'jsonb', 'json', 'ARRAY', 'character varying')
          -- A partition's rows are its table's, scrubbed through it.
          AND table_name NOT IN (SELECT relname FROM pg_class WHERE relispartition)`,
      );
    const scrubbed = new Set(SURFACES.flatMap((s) => Object.keys(s.columns).map((column) => `${s.table}.${column}`)));
    const unclassified = rows
      .map((r) => `${r.table_name}.${r.column_name}`)
      .filter(
        (column) => !scrubbed.has(column) && !(column in UNSCRUBBED) && !(`${column.split('.')[0]}.*` in UNSCRUBBED),
      );
    expect(unclassified).toEqual([]);
  });
});
