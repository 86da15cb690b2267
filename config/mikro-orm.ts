import { fileURLToPath } from 'node:url';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { migrationsList } from '../server/db/migrations/index.js';
import { entities } from '../server/entities/index.js';
import { behindPooler, type Config } from './schema.js';

declare module '@mikro-orm/core' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- declaration merging repeats the interface's type parameters
  interface MikroORMOptions<D, EM> {
    /**
     * Postlane's own option: hot statements are prepared under a name, planned once per connection.
     * Off on a transaction pooler (PgBouncer in transaction mode), where a client's next statement
     * may run on another server connection that lacks (or has another client's) statement of that name.
     */
    namedStatements?: boolean;
  }
}

const migrationsDir = (suffix: string) => fileURLToPath(new URL(`../server/db/migrations${suffix}`, import.meta.url));

export type PgConnection = {
  query(...args: unknown[]): unknown;
  /** pg's wire connection; destroying its socket fails the query in flight and retires the client from the pool. */
  connection: { stream: { destroy(err?: Error): void } };
};

/** How long after the server's own statement timeout a silent connection is given up as lost. */
const LOST_AFTER_MS = 2_000;

/**
 * A query still unanswered `afterMs` after it was sent is on a connection that no longer reaches the
 * server (a network partition): the server's statement timeout cannot fire for a query it never got,
 * and the kernel retransmits for about 15 minutes. Its socket is destroyed instead: the query fails as
 * unavailable (a 503 with Retry-After, not a hung request) and knex drops the client, so the next
 * query opens a fresh connection once the network is back.
 */
function abandonWhenSilent(connection: PgConnection, afterMs: number) {
  // pg's own method, looked up at each call: what patches pg's prototype later (tracing, the tests' statement counts) still sees every query.
  const prototype = Object.getPrototypeOf(connection) as PgConnection;
  const query = (...args: unknown[]) => prototype.query.apply(connection, args);
  connection.query = (...args: unknown[]) => {
    const callback = args.at(-1);
    // Knex always passes a callback; a streamed query (no callback) keeps pg's own behaviour.
    if (typeof callback !== 'function') return query(...args);
    const timer = setTimeout(() => {
      connection.connection.stream.destroy(
        Object.assign(new Error(`no answer from the database within ${afterMs} ms`), { code: 'ETIMEDOUT' }),
      );
    }, afterMs);
    return query(...args.slice(0, -1), (...results: unknown[]) => {
      clearTimeout(timer);
      (callback as (...results: unknown[]) => void)(...results);
    });
  };
}

/**
 * Server connections give up on any statement after POSTLANE_STATEMENT_TIMEOUT_SECONDS, so a stalled
 * database turns requests into errors instead of holding them (and their bodies) indefinitely, and
 * on a connection the server does not answer at all shortly after (see `abandonWhenSilent`).
 * Migrations and the CLI use the plain pool: an index build may rightly take longer. Behind a
 * transaction pooler a session SET would land on whichever server connection served it and stay
 * there for other clients, so there the timeout is the role's (setPooledStatementTimeout).
 */
export function serverPool(config: Config): Options['pool'] {
  const timeoutMs = config.POSTLANE_STATEMENT_TIMEOUT_SECONDS * 1000;
  const pooled = behindPooler(config);
  return {
    min: 0,
    max: config.DATABASE_POOL_SIZE,
    afterCreate: (connection: PgConnection, done: (err: Error | null, connection: PgConnection) => void) => {
      if (timeoutMs > 0) abandonWhenSilent(connection, timeoutMs + LOST_AFTER_MS);
      if (pooled) return done(null, connection);
      connection.query(`SET statement_timeout = ${timeoutMs}`, (err: Error | null) => done(err, connection));
    },
  } as Options['pool'];
}

/** One ORM configuration for the server, the CLI and the tests; `overrides` is how tests adjust it. */
export function mikroOrmConfig(config: Config, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl: config.DATABASE_URL,
    // Only the direct URL is known to be a real session (DATABASE_URL may point at the pooler).
    namedStatements: (overrides.clientUrl ?? config.DATABASE_URL) === config.POSTLANE_DATABASE_DIRECT_URL,
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
