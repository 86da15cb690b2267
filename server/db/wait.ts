import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Config } from '../../config/index.js';
import type { Logger } from '../logger.js';

// Apart from orm.ts, which loads MikroORM: a CLI command checks the database while its own modules load.

export class DatabaseUnavailableError extends Error {
  constructor(cause: Error) {
    super(`PostgreSQL is not reachable (${cause.message}). Check that it is running and that DATABASE_URL is right.`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Retries with backoff until the database answers (`timeoutMs` may be infinite); nothing that needs it is constructed before. */
export async function waitForDatabase(
  config: Pick<Config, 'DATABASE_URL'>,
  logger: Logger | null,
  timeoutMs = 60_000,
): Promise<void> {
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
      if ((attempt & (attempt - 1)) === 0)
        logger?.warn({ attempt, retryInMs: delay, err: (err as Error).message }, 'waiting for the database');
      await sleep(delay);
    } finally {
      await client.end().catch(() => {});
    }
  }
}
