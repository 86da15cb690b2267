import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The server the tests create their databases on. The global setup picks it (test-server.ts) and
 * passes it to the test workers in POSTLANE_TEST_ADMIN_URL; read when used, since it is set after import.
 */
const adminUrl = () => process.env.POSTLANE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The database settings an app under test gets for the test database at `url`: that URL, or in a
 * POSTLANE_TEST_PGBOUNCER=1 run the same database through the run's PgBouncer (transaction mode)
 * with `url` as the direct one. A URL of another server (a throwaway cluster, a dead port) stays as is.
 */
export function appDatabaseEnv(url: string): { DATABASE_URL: string; POSTLANE_DATABASE_DIRECT_URL?: string } {
  const pooler = process.env.POSTLANE_TEST_POOLER_URL;
  const direct = new URL(url);
  const server = new URL(adminUrl());
  if (!pooler || direct.host !== server.host) return { DATABASE_URL: url };
  const through = new URL(pooler);
  through.pathname = direct.pathname;
  return { DATABASE_URL: through.toString(), POSTLANE_DATABASE_DIRECT_URL: url };
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** One statement on a test database, on a connection of its own (outside the app's pools). */
export async function queryDatabase<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export const uniqueDatabaseName = (prefix: string) => `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;

/** A fresh database cloned from the migrated template of this run: fast, and isolated per test file. */
export async function createTestDatabase(template: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = uniqueDatabaseName('postlane_t');
  await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  return { url: databaseUrl(name), drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
