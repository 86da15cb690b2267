import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../config/index.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from './db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/** One migrated database per run; every test file clones its own copy from it. */
export default async function setup(project: TestProject) {
  const name = uniqueDatabaseName('postlane_template');
  await adminQuery(`CREATE DATABASE "${name}"`);
  const orm = await initOrm(loadConfig({ DATABASE_URL: databaseUrl(name), POSTLANE_CONFIG: '/nonexistent/postlane.json' }));
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  project.provide('templateDatabase', name);
  return async () => {
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  };
}
