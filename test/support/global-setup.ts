import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../config/index.js';
import { migrate } from '../../server/db/orm.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from './db.js';
import { ensureTestTools } from './os-tools.js';
import { type PgBouncer, startPgBouncer } from './pgbouncer.js';
import { startTestServer } from './test-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/**
 * Makes the run self-sufficient (docs/development.md): the OS tools the tests drive, a PostgreSQL
 * server, and one migrated database per run that every test file clones its own copy from.
 */
export default async function setup(project: TestProject) {
  ensureTestTools(project.name === 'system' ? 'system' : 'integration');
  const server = await startTestServer();
  // The workers are forked after this, with this environment: db.ts reads it there.
  process.env.POSTLANE_TEST_ADMIN_URL = server.adminUrl;
  // POSTLANE_TEST_PGBOUNCER=1: every app and process of the run reaches its database through a
  // PgBouncer in transaction mode, with the direct URL beside it (db.ts, appDatabaseEnv).
  let pooler: PgBouncer | null = null;
  if (process.env.POSTLANE_TEST_PGBOUNCER === '1') {
    pooler = await startPgBouncer(server.adminUrl);
    process.env.POSTLANE_TEST_POOLER_URL = pooler.url('postgres');
    process.stderr.write(
      `[test] the apps under test reach PostgreSQL through PgBouncer (transaction mode) on 127.0.0.1:${pooler.port}\n`,
    );
  }
  const name = uniqueDatabaseName('postlane_template');
  try {
    await adminQuery(`CREATE DATABASE "${name}"`);
    await migrate(loadConfig({ DATABASE_URL: databaseUrl(name), POSTLANE_CONFIG: '/nonexistent/postlane.json' }));
  } catch (err) {
    await pooler?.stop();
    await server.stop();
    throw err;
  }
  project.provide('templateDatabase', name);
  return async () => {
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await pooler?.stop();
    await server.stop();
  };
}
