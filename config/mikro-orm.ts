import { fileURLToPath } from 'node:url';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { migrationsList } from '../server/db/migrations/index.js';
import { entities } from '../server/entities/index.js';
import { behindPooler, type Config } from './schema.js';

const migrationsDir = (suffix: string) => fileURLToPath(new URL(`../server/db/migrations${suffix}`, import.meta.url));

export type PgConnection = { query(sql: string, callback: (err: Error | null) => void): void };

/**
 * Server connections give up on any statement after POSTLANE_STATEMENT_TIMEOUT_SECONDS, so a stalled
 * database turns requests into errors instead of holding them (and their bodies) indefinitely.
 * Migrations and the CLI use the plain pool: an index build may rightly take longer. Behind a
 * transaction pooler a session SET would land on whichever server connection served it and stay
 * there for other clients, so there the timeout is the role's (setPooledStatementTimeout).
 */
export function serverPool(config: Config): Options['pool'] {
  const timeoutMs = config.POSTLANE_STATEMENT_TIMEOUT_SECONDS * 1000;
  if (behindPooler(config)) return { min: 0, max: config.DATABASE_POOL_SIZE };
  return {
    min: 0,
    max: config.DATABASE_POOL_SIZE,
    afterCreate: (connection: PgConnection, done: (err: Error | null, connection: PgConnection) => void) =>
      connection.query(`SET statement_timeout = ${timeoutMs}`, (err) => done(err, connection)),
  } as Options['pool'];
}

/** One ORM configuration for the server, the CLI and the tests; `overrides` is how tests adjust it. */
export function mikroOrmConfig(config: Config, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl: config.DATABASE_URL,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: config.DATABASE_POOL_SIZE },
    allowGlobalContext: false,
    debug: false,
    ensureDatabase: false,
    // Created by our migration, owned by Agenda: never diffed against the entities.
    schemaGenerator: { skipTables: ['agenda_jobs'] },
    discovery: { warnWhenNoEntities: true },
    migrations: {
      tableName: 'mikro_orm_migrations',
      migrationsList,
      // Used only when generating a new migration from the entities (see docs/development.md).
      path: migrationsDir(''),
      transactional: true,
      allOrNothing: true,
      // No snapshot file: a new migration is diffed against a migrated development database, where
      // skipTables keeps agenda_jobs out of the diff (the snapshot path ignores it), and running
      // migrations never writes into the install directory.
      snapshot: false,
      silent: true,
      emit: 'ts',
    },
    ...overrides,
  });
}
