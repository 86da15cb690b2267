import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { migrationsList } from '../../../server/db/migrations/index.js';
import { initOrm } from '../../../server/db/orm.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../../support/db.js';
import { runPostlane } from '../../support/postlane-process.js';

const name = uniqueDatabaseName('postlane_upgrade');
const url = databaseUrl(name);

beforeAll(() => adminQuery(`CREATE DATABASE "${name}"`));
afterAll(() => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));

describe('upgrading a database made by the first release', () => {
  it('postlane migrate applies the rest and keeps the data', async () => {
    // The schema as the first migration left it, with a sent email in it.
    const orm = await initOrm(loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: url }));
    await orm.migrator.up({ to: migrationsList[0]!.name });
    await orm.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `INSERT INTO team (id, created_at, name) VALUES ('11111111-1111-4111-8111-111111111111', now(), 'Old')`,
    );
    await client.query(`INSERT INTO email (id, created_at, updated_at, team_id, "from", "to", cc, bcc, reply_to, subject, text, region, message_id, status, last_event, send_after)
      VALUES ('22222222-2222-4222-8222-222222222222', now(), now(), '11111111-1111-4111-8111-111111111111', 'a@acme.test', '{b@example.com}', '{}', '{}', '{}', 'Before the upgrade', 'x', 'us-east-1', '<x@acme.test>', 'sent', 'sent', now())`);

    const env = { DATABASE_URL: url };
    expect(JSON.parse((await runPostlane(['migrate', '--status', '--json'], env)).stdout)).toEqual({
      pending: migrationsList.slice(1).map((m) => m.name),
    });
    const migrated = await runPostlane(['migrate', '--json'], env);
    expect(migrated.code, migrated.output).toBe(0);
    expect(JSON.parse(migrated.stdout)).toEqual({ applied: migrationsList.slice(1).map((m) => m.name) });

    const { rows } = await client.query(
      `SELECT subject, headers, tags, status FROM email WHERE id = '22222222-2222-4222-8222-222222222222'`,
    );
    await client.end();
    expect(rows).toEqual([{ subject: 'Before the upgrade', headers: {}, tags: [], status: 'sent' }]);
    expect(JSON.parse((await runPostlane(['migrate', '--status', '--json'], env)).stdout)).toEqual({ pending: [] });
  });
});
