import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../config/index.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from './db.js';
import { ensureTestTools } from './os-tools.js';
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
  ensureTestTools();
  const server = await startTestServer();
  // The workers are forked after this, with this environment: db.ts reads it there.
  process.env.POSTLANE_TEST_ADMIN_URL = server.adminUrl;
  const name = uniqueDatabaseName('postlane_template');
  try {
    await adminQuery(`CREATE DATABASE "${name}"`);
    const orm = await initOrm(loadConfig({ DATABASE_URL: databaseUrl(name), POSTLANE_CONFIG: '/nonexistent/postlane.json' }));
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
  } catch (err) {
    await server.stop();
    throw err;
  }
  project.provide('templateDatabase', name);
  return async () => {
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await server.stop();
  };
}
