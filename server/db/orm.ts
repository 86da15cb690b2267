import { setTimeout as sleep } from 'node:timers/promises';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Config } from '../../config/index.js';
import { mikroOrmConfig } from '../../config/mikro-orm.js';
import type { Logger } from '../logger.js';
import { withoutNamedStatements } from './query.js';

/** The ORM on DATABASE_URL (or `overrides.clientUrl`); on anything but the direct URL, no statement is prepared under a name. */
export async function initOrm(config: Config, overrides: Partial<Options> = {}): Promise<MikroORM> {
  const orm = await MikroORM.init(mikroOrmConfig(config, overrides));
  if ((overrides.clientUrl ?? config.DATABASE_URL) !== config.POSTLANE_DATABASE_DIRECT_URL) withoutNamedStatements(orm);
  return orm;
}

export class DatabaseUnavailableError extends Error {
  constructor(cause: Error) {
    super(`PostgreSQL is not reachable (${cause.message}). Check that it is running and that DATABASE_URL is right.`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Retries with backoff until the database answers (`timeoutMs` may be infinite); nothing that needs it is constructed before. */
export async function waitForDatabase(config: Pick<Config, 'DATABASE_URL'>, logger: Logger | null, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1, delay = 250; ; attempt += 1, delay = Math.min(delay * 2, 5_000)) {
    const client = new pg.Client({ connectionString: config.DATABASE_URL, connectionTimeoutMillis: 5_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() + delay > deadline) throw new DatabaseUnavailableError(err as Error);
      // Attempts 1, 2, 4, 8…: a long wait (a service started before its database) logs a few lines, not one per try.
      if ((attempt & (attempt - 1)) === 0) logger?.warn({ attempt, retryInMs: delay, err: (err as Error).message }, 'waiting for the database');
      await sleep(delay);
    } finally {
      await client.end().catch(() => {});
    }
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
  const orm = await initOrm(config, { clientUrl: config.POSTLANE_DATABASE_DIRECT_URL });
  try {
    return (await orm.migrator.up()).map((m) => m.name);
  } finally {
    await orm.close();
  }
}
