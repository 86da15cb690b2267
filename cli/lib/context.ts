import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config/index.js';

export interface GlobalOptions {
  json?: boolean;
}

/** Any action: parameters are `never` so that every commander signature fits (they are called with what commander passes). */
type Action = (...args: never[]) => Promise<void>;

/**
 * A command's actions, by the names its module exports; the module is imported only when one of
 * them runs, as it brings Ink, React and services of its own that `postlane serve` must not load.
 * With `database`, PostgreSQL is tried first, with nothing but `pg` loaded: a refused connection is
 * told without waiting for that module (seconds on a busy machine, during which the event loop,
 * and so the connection's retries, would stand still).
 */
export function actionsFrom<M extends Record<keyof M, Action>>(
  load: () => Promise<M>,
  { database = false }: { database?: boolean } = {},
) {
  return (name: keyof M) =>
    command(async (...args) => {
      if (database) await reachDatabase();
      return ((await load())[name] as unknown as (...args: unknown[]) => Promise<void>)(...args);
    });
}

async function reachDatabase(): Promise<void> {
  const [{ loadConfig }, { waitForDatabase }] = await Promise.all([
    import('../../config/index.js'),
    import('../../server/db/wait.js'),
  ]);
  await waitForDatabase(loadConfig(), null, DATABASE_WAIT_MS);
}

/** Runs a command body and turns every failure into a clear message and a non-zero exit. */
function command(fn: (...args: unknown[]) => Promise<void>) {
  return async (...args: unknown[]) => {
    const options = args.findLast((a) => typeof a === 'object' && a !== null && 'optsWithGlobals' in a) as
      { optsWithGlobals(): GlobalOptions } | undefined;
    const json = Boolean(options?.optsWithGlobals().json);
    try {
      await fn(...args);
    } catch (err) {
      process.exitCode = await reportFailure(err as Error, json);
    }
  };
}

async function reportFailure(err: Error, json: boolean): Promise<number> {
  const { title, problems, hint } = await describeFailure(err);
  const { printJson, printProblems } = await import('./text.js');
  if (json) printJson({ error: { name: err.name, message: title, problems } });
  else printProblems(title, problems, hint);
  return 1;
}

/**
 * The classes a failure is told apart by are imported only when one happened: they bring the ORM
 * and the server, which `postlane --help` and `--version` must not wait for.
 */
async function describeFailure(err: Error): Promise<{ title: string; problems: string[]; hint?: string }> {
  const [{ ConfigError }, { DatabaseUnavailableError }] = await Promise.all([
    import('../../config/index.js'),
    import('../../server/db/wait.js'),
  ]);
  if (err instanceof ConfigError) {
    return {
      title: 'The configuration is invalid',
      problems: err.problems,
      hint: 'Fix the environment variables or the config file, then run the command again.',
    };
  }
  if (err instanceof DatabaseUnavailableError)
    return { title: err.message, problems: [], hint: 'Is PostgreSQL running? `systemctl status postgresql`' };
  // The server's classes last: server/main.js loads the ORM and every service.
  const [{ ApiError }, { PendingMigrationsError }] = await Promise.all([
    import('../../server/errors.js'),
    import('../../server/main.js'),
  ]);
  if (err instanceof PendingMigrationsError) return { title: err.message, problems: err.pending };
  if (err instanceof ApiError) return { title: err.message, problems: [] };
  return { title: err.message || 'Unexpected failure', problems: [] };
}

/**
 * How long a command waits for PostgreSQL: a couple of quick retries (a restart in progress), so a
 * refused or unreachable database is reported within two seconds rather than after a long wait.
 */
export const DATABASE_WAIT_MS = 1_200;

/** Config, a database connection and a unit of work, for commands that talk to Postgres directly. */
export async function withDatabase<T>(
  fn: (ctx: { config: Config; orm: MikroORM }) => Promise<T>,
  given?: Config,
): Promise<T> {
  const [{ loadConfig }, { initOrm, waitForDatabase }, { RequestContext }] = await Promise.all([
    import('../../config/index.js'),
    import('../../server/db/orm.js'),
    import('@mikro-orm/core'),
  ]);
  const config = given ?? loadConfig();
  await waitForDatabase(config, null, DATABASE_WAIT_MS);
  const orm = await initOrm(config);
  try {
    return await RequestContext.create(orm.em, () => fn({ config, orm }));
  } finally {
    await orm.close();
  }
}
