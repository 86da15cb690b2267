import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { migrationsList } from '../../../server/db/migrations/index.js';
import { initOrm } from '../../../server/db/orm.js';
import {
  addEmailPartitions,
  dropExpiredEmailPartitions,
} from '../../../server/services/maintenance/email-partitions.js';
import { purgeEmailTracking } from '../../../server/services/maintenance/purges.js';
import { DAYS_AHEAD } from '../../../server/services/maintenance/task-catalogue.js';
import { adminQuery, databaseUrl, queryDatabase, uniqueDatabaseName } from '../../support/db.js';
import { utcMidnightAfter } from '../../support/clock-instants.js';
import { useTestApp } from '../../support/test-app.js';

const DAY_MS = 86_400_000;
const day = (at: Date) => at.toISOString().slice(0, 10).replaceAll('-', '');

const sql = <T>(text: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(text, params);
const tables = async (like: string) =>
  (
    await sql<{ relname: string }>(
      `SELECT relname FROM pg_class WHERE relname LIKE ? AND relkind = 'r' ORDER BY relname`,
      [like],
    )
  ).map((r) => r.relname);
const send = (body: Record<string, unknown> = {}) =>
  app.request('POST', '/emails', {
    token: app.token,
    body: { from: 'news@acme.test', to: ['a@example.com', 'b@example.com'], subject: 'Hi', text: 'x', ...body },
  });

// Days well after the template database's legacy partition, which ends with the day the tests started.
const day0 = new Date(utcMidnightAfter(new Date(), 200).getTime() + 12 * 3_600_000);
const day1 = new Date(day0.getTime() + DAY_MS);

const app = useTestApp();

describe('email retention by day partitions', () => {
  it('makes the days ahead once, and moves rows the DEFAULT partition took for a day into it', async () => {
    app.deps.clock = () => day0;
    const early = await send();
    expect(early.status).toBe(200);
    expect(await sql('SELECT id FROM email_default WHERE id = ?', [early.body.id])).toHaveLength(1);

    expect(await app.run(() => addEmailPartitions(app.deps))).toBe(4 * (DAYS_AHEAD + 1));
    expect(await app.run(() => addEmailPartitions(app.deps))).toBe(0);
    expect(await sql('SELECT count(*)::int AS n FROM email_default')).toEqual([{ n: 0 }]);
    expect(await sql(`SELECT count(*)::int AS n FROM "email_p${day(day0)}" WHERE id = ?`, [early.body.id])).toEqual([
      { n: 1 },
    ]);
    expect(
      await sql(`SELECT count(*)::int AS n FROM "email_recipient_p${day(day0)}" WHERE email_id = ?`, [early.body.id]),
    ).toEqual([{ n: 2 }]);
    expect((await app.request('GET', `/emails/${early.body.id}`, { token: app.token })).body.subject).toBe('Hi');
  });

  it('drops whole days past POSTLANE_EMAIL_RETENTION_DAYS, keeps a day with mail still to send, and leaves suppressions and contacts alone', async () => {
    app.deps.clock = () => day0;
    const old = await send({ attachments: [{ filename: 'a.txt', content: Buffer.from('hello').toString('base64') }] });
    app.deps.clock = () => day1;
    const waiting = await send();
    await sql(`UPDATE email SET status = 'sent', last_event = 'delivered' WHERE id <> ?`, [waiting.body.id]);
    expect(
      (await app.request('POST', '/suppressions', { token: app.token, body: { email: 'a@example.com' } })).status,
    ).toBeLessThan(300);
    expect(
      (await app.request('POST', '/contacts', { token: app.token, body: { email: 'b@example.com' } })).status,
    ).toBeLessThan(300);
    await sql(`INSERT INTO email_tracking (email_id, created_at) VALUES (?, ?)`, [old.body.id, day0]);

    // Day 0 ended 30 days ago less an hour: not past retention yet (the template's days, long past, go).
    app.deps.clock = () => new Date(utcMidnightAfter(day0, 31).getTime() - 3_600_000);
    await app.run(() => dropExpiredEmailPartitions(app.deps));
    expect(await tables(`%_p${day(day0)}`)).toHaveLength(4);

    app.deps.clock = () => utcMidnightAfter(day1, 31);
    await app.run(() => dropExpiredEmailPartitions(app.deps));
    // Day 0 went whole; day 1 holds a queued email, so it stays whole; its events' day went.
    expect(await tables(`%_p${day(day0)}`)).toEqual([]);
    expect(await tables(`%_p${day(day1)}`)).toEqual([
      `email_attachment_p${day(day1)}`,
      `email_p${day(day1)}`,
      `email_recipient_p${day(day1)}`,
    ]);
    expect((await app.request('GET', `/emails/${old.body.id}`, { token: app.token })).status).toBe(404);
    expect((await app.request('GET', `/emails/${waiting.body.id}`, { token: app.token })).body.last_event).toBe(
      'queued',
    );
    expect(await sql('SELECT count(*)::int AS n FROM email_recipient WHERE email_id = ?', [waiting.body.id])).toEqual([
      { n: 2 },
    ]);
    expect((await app.request('GET', '/suppressions/a@example.com', { token: app.token })).status).toBe(200);
    expect((await app.request('GET', '/contacts/b@example.com', { token: app.token })).status).toBe(200);
    expect(await app.run(() => purgeEmailTracking(app.deps))).toBe(1);

    // Once its mail has gone, the day goes too.
    await sql(`UPDATE email SET status = 'sent' WHERE id = ?`, [waiting.body.id]);
    expect(await app.run(() => dropExpiredEmailPartitions(app.deps))).toBe(3);
    expect(await tables(`%_p${day(day1)}`)).toEqual([]);
  });
});

describe('upgrading a database with emails', () => {
  const name = uniqueDatabaseName('postlane_partition_upgrade');
  const url = databaseUrl(name);
  beforeAll(() => adminQuery(`CREATE DATABASE "${name}"`));
  afterAll(() => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));

  it('keeps the old rows in a legacy partition, readable and listed in order, which retention drops whole once past it', async () => {
    const config = loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: url });
    const orm = await initOrm(config);
    try {
      const partitioning = migrationsList.findIndex((m) => m.name === 'Migration20261220000000_email_partitions');
      await orm.migrator.up({ to: migrationsList[partitioning - 1]!.name });
      // Old ids are random (v4); one email is still queued.
      await queryDatabase(
        url,
        `INSERT INTO team (id, created_at, name) VALUES ('11111111-1111-4111-8111-111111111111', now(), 'Old')`,
      );
      await queryDatabase(
        url,
        `
        WITH e AS (
          INSERT INTO email (id, created_at, updated_at, team_id, "from", "to", cc, bcc, reply_to, subject, text, region, message_id, status, last_event, send_after)
          SELECT gen_random_uuid(), now() - make_interval(days => n), now(), '11111111-1111-4111-8111-111111111111', 'a@acme.test', '{b@example.com}', '{}', '{}', '{}',
                 'Old ' || n, 'x', 'us-east-1', '<x' || n || '@acme.test>', CASE n WHEN 1 THEN 'queued' ELSE 'sent' END, 'sent', now()
            FROM generate_series(1, 5) n RETURNING id, created_at)
        , r AS (INSERT INTO email_recipient (id, created_at, email_id, kind, address, status) SELECT gen_random_uuid(), created_at, id, 'to', 'b@example.com', 'accepted' FROM e)
        INSERT INTO event (id, created_at, team_id, email_id, type, payload) SELECT gen_random_uuid(), created_at, '11111111-1111-4111-8111-111111111111', id, 'email.sent', '{}' FROM e`,
      );

      await orm.migrator.up();
      const listed = await queryDatabase<{ subject: string; recipients: number; events: number }>(
        url,
        `
        SELECT subject, (SELECT count(*)::int FROM email_recipient r WHERE r.email_id = e.id) AS recipients, (SELECT count(*)::int FROM event v WHERE v.email_id = e.id) AS events
          FROM email e WHERE team_id = '11111111-1111-4111-8111-111111111111' ORDER BY created_at DESC, id DESC`,
      );
      expect(listed).toEqual([1, 2, 3, 4, 5].map((n) => ({ subject: `Old ${n}`, recipients: 1, events: 1 })));
      expect(await queryDatabase(url, `SELECT count(*)::int AS n FROM email_legacy`)).toEqual([{ n: 5 }]);

      const [{ ends }] = (await queryDatabase<{ ends: Date }>(
        url,
        `SELECT (regexp_match(pg_get_expr(relpartbound, oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS ends FROM pg_class WHERE relname = 'email_legacy'`,
      )) as [{ ends: Date }];
      const deps = { orm, config, clock: () => new Date(ends.getTime() + 30 * DAY_MS) };
      // The legacy partition holds a queued email: kept; its events are not mail, so they go.
      expect(await dropExpiredEmailPartitions(deps)).toBe(1);
      expect(await queryDatabase(url, `SELECT count(*)::int AS n FROM email`)).toEqual([{ n: 5 }]);
      await queryDatabase(url, `UPDATE email SET status = 'sent'`);
      expect(await dropExpiredEmailPartitions(deps)).toBe(3);
      expect(await queryDatabase(url, `SELECT count(*)::int AS n FROM email`)).toEqual([{ n: 0 }]);
      expect(
        await queryDatabase(url, `SELECT relname FROM pg_class WHERE relname LIKE '%legacy%' AND relkind = 'r'`),
      ).toEqual([]);
    } finally {
      await orm.close();
    }
  });
});
