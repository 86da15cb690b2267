import { MikroORM, type Options } from '@mikro-orm/postgresql';
import pg from 'pg';
import { behindPooler, type Config } from '../../config/index.js';
import { mikroOrmConfig, type PgConnection } from '../../config/mikro-orm.js';
import type { Logger } from '../logger.js';

/** The ORM on DATABASE_URL (or `overrides.clientUrl`). */
export async function initOrm(config: Config, overrides: Partial<Options> = {}): Promise<MikroORM> {
  return MikroORM.init(mikroOrmConfig(config, overrides));
}

// Re-exported: callers that also need the ORM import both from here.
export { DatabaseUnavailableError, waitForDatabase } from './wait.js';

/**
 * Behind a transaction pooler a session SET stays on whichever server connection ran it, so the
 * statement timeout of `postlane serve` becomes the role's default in this database instead, set
 * over the direct URL: every server connection the pooler opens from then on starts with it (those
 * it holds already keep theirs until it recycles them, PgBouncer's server_lifetime).
 */
export async function setPooledStatementTimeout(config: Config, logger: Logger | null): Promise<void> {
  if (!behindPooler(config)) return;
  const client = new pg.Client({
    connectionString: config.POSTLANE_DATABASE_DIRECT_URL,
    connectionTimeoutMillis: 5_000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    const { db } = (await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!;
    await client.query(
      `ALTER ROLE CURRENT_USER IN DATABASE ${client.escapeIdentifier(db)} SET statement_timeout = ${config.POSTLANE_STATEMENT_TIMEOUT_SECONDS * 1000}`,
    );
  } catch (err) {
    logger?.warn(
      { err: (err as Error).message },
      'could not set the statement timeout of the pooled role; set it in PostgreSQL (docs/operations.md, "PgBouncer")',
    );
  } finally {
    await client.end().catch(() => {});
  }
}

export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  return (await orm.migrator.getPendingMigrations()).map((m) => m.name);
}

/**
 * Applies every pending migration in one transaction (allOrNothing) on the direct URL, never through
 * a transaction pooler (DDL, long index builds); returns their names.
 */
export async function migrate(config: Config): Promise<string[]> {
  // No statement timeout for an index build, whatever the role's default (setPooledStatementTimeout).
  const pool = {
    min: 0,
    max: 2,
    afterCreate: (connection: PgConnection, done: (err: Error | null, connection: PgConnection) => void) =>
      connection.query('SET statement_timeout = 0', (err: Error | null) => done(err, connection)),
  };
  const orm = await initOrm(config, { clientUrl: config.POSTLANE_DATABASE_DIRECT_URL, pool: pool as Options['pool'] });
  try {
    return (await orm.migrator.up()).map((m) => m.name);
  } finally {
    await orm.close();
  }
}
