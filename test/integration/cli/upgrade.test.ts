import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { isReversible, migrationsList, RELEASES } from '../../../server/db/migrations/index.js';
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
    const rest = migrationsList.slice(1).map((m) => ({ name: m.name, reversible: isReversible(m.name) }));
    expect(JSON.parse((await runPostlane(['migrate', '--status', '--json'], env)).stdout)).toEqual({
      pending: rest.map((m) => m.name),
      migrations: rest,
    });
    // The first migration has no down(); the ones after it do, but for the day-partitioned emails.
    expect(isReversible(migrationsList[0]!.name)).toBe(false);
    expect(isReversible('Migration20261122000000_email_content')).toBe(true);
    expect(isReversible('Migration20261220000000_email_partitions')).toBe(false);
    // A dry run lists the same and applies nothing.
    const dry = await runPostlane(['migrate', '--dry-run', '--json'], env);
    expect(dry.code, dry.output).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ pending: rest.map((m) => m.name), migrations: rest, applied: [] });
    expect(JSON.parse((await runPostlane(['migrate', '--status', '--json'], env)).stdout).pending).toHaveLength(
      rest.length,
    );
    const migrated = await runPostlane(['migrate', '--json'], env);
    expect(migrated.code, migrated.output).toBe(0);
    expect(JSON.parse(migrated.stdout)).toEqual({ applied: rest.map((m) => m.name), migrations: rest });

    const { rows } = await client.query(
      `SELECT subject, headers, tags, status FROM email WHERE id = '22222222-2222-4222-8222-222222222222'`,
    );
    await client.end();
    expect(rows).toEqual([{ subject: 'Before the upgrade', headers: {}, tags: [], status: 'sent' }]);
    expect(JSON.parse((await runPostlane(['migrate', '--status', '--json'], env)).stdout)).toEqual({
      pending: [],
      migrations: [],
    });
  }, 180_000);
});

describe('upgrading from the previous release', () => {
  const previous = RELEASES.at(-1)!;
  const upgradeName = uniqueDatabaseName('postlane_release_upgrade');
  const upgradeUrl = databaseUrl(upgradeName);
  beforeAll(() => adminQuery(`CREATE DATABASE "${upgradeName}"`));
  afterAll(() => adminQuery(`DROP DATABASE IF EXISTS "${upgradeName}" WITH (FORCE)`));

  it(`${previous.version}'s schema with a team and its API key migrates forward and keeps them`, async () => {
    const orm = await initOrm(loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: upgradeUrl }));
    await orm.migrator.up({ to: previous.lastMigration });
    await orm.close();
    const env = { DATABASE_URL: upgradeUrl };
    // What an appliance of that release holds: a team and its key (as SHA-256), written as that schema has them.
    const seed = new pg.Client({ connectionString: upgradeUrl });
    await seed.connect();
    await seed.query(
      `INSERT INTO team (id, created_at, name) VALUES ('33333333-3333-4333-8333-333333333333', now(), 'Before the upgrade')`,
    );
    // Two teams could share a name then: the later one is renamed when names become unique.
    await seed.query(
      `INSERT INTO team (id, created_at, name) VALUES ('55555555-5555-4555-8555-555555555555', now() + interval '1 second', 'Before the upgrade')`,
    );
    await seed.query(`INSERT INTO api_key (id, created_at, team_id, name, permission, token_hash, token_hint)
      VALUES ('44444444-4444-4444-8444-444444444444', now(), '33333333-3333-4333-8333-333333333333', 'app', 'full_access', sha256('re_upgrade'::bytea), 're_up')`);
    await seed.end();
    const after = migrationsList.slice(migrationsList.findIndex((m) => m.name === previous.lastMigration) + 1);
    const dry = JSON.parse((await runPostlane(['migrate', '--dry-run', '--json'], env)).stdout);
    expect(dry.pending).toEqual(after.map((m) => m.name));
    const migrated = await runPostlane(['migrate', '--json'], env);
    expect(migrated.code, migrated.output).toBe(0);
    expect(JSON.parse(migrated.stdout).applied).toEqual(after.map((m) => m.name));
    const client = new pg.Client({ connectionString: upgradeUrl });
    await client.connect();
    const { rows } = await client.query(`SELECT name FROM team ORDER BY created_at`);
    const keys = await client.query(`SELECT count(*)::int AS n FROM api_key`);
    await client.end();
    expect(rows).toEqual([
      { name: 'Before the upgrade' },
      { name: 'Before the upgrade (55555555-5555-4555-8555-555555555555)' },
    ]);
    expect(keys.rows[0].n).toBe(1);
  }, 180_000);
});
