import { once } from 'node:events';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config/index.js';
import { createApp, createMetricsApp } from './app.js';
import { serverPool } from '../config/mikro-orm.js';
import { initOrm, pendingMigrations, setPooledStatementTimeout, waitForDatabase } from './db/orm.js';
import { knexLog } from './db/unavailable.js';
import { createDeps, type Deps } from './deps.js';
import { serviceUnavailable } from './errors.js';
import { createHttpServer } from './http/http-server.js';
import { AgendaJobs, jobDefinitions } from './jobs/index.js';
import { createLogger, type Logger, errorFields } from './logger.js';
import { SecretBox } from './security/secret-box.js';
import { type InboundListener, startInboundListener } from './services/inbound/listener.js';
import { type SubmissionListener, startSubmissionListener } from './services/submission/listener.js';

export type Role = 'api' | 'worker' | 'inbound' | 'submission' | 'all';

export interface Appliance {
  deps: Deps;
  /** Where the API listens; null for a worker. */
  url: string | null;
  /** The inbound SMTP listener's port; null when this process does not receive. */
  inboundPort: number | null;
  /** The SMTP submission listener's ports; null when this process does not take submissions. */
  submissionPorts: SubmissionListener['ports'] | null;
  shutdown(): Promise<void>;
}

export class PendingMigrationsError extends Error {
  constructor(readonly pending: string[]) {
    super(
      `The database schema is behind this version (${pending.length} migration(s) pending). Run \`postlane migrate\` first.`,
    );
    this.name = 'PendingMigrationsError';
  }
}

/**
 * Starts the API, the worker, the inbound SMTP listener, or all of them on one Postgres. Any
 * number of each may run at once: the database is the only shared state. `all` receives mail only
 * when POSTLANE_INBOUND_PORT is set; `inbound` refuses to start without it.
 */
export async function boot(
  config: Config,
  role: Role,
  logger: Logger = createLogger(config.POSTLANE_LOG_LEVEL),
): Promise<Appliance> {
  SecretBox.requireKey(config);
  if (role === 'inbound' && config.POSTLANE_INBOUND_PORT === undefined)
    throw new Error('`--role inbound` needs POSTLANE_INBOUND_PORT (25 in production).');
  const submissionConfigured = [
    config.POSTLANE_SUBMISSION_TLS_PORT,
    config.POSTLANE_SUBMISSION_STARTTLS_PORT,
    config.POSTLANE_SUBMISSION_PLAIN_PORT,
  ].some((p) => p !== undefined);
  if (role === 'submission' && !submissionConfigured)
    throw new Error(
      '`--role submission` needs POSTLANE_SUBMISSION_TLS_PORT or POSTLANE_SUBMISSION_STARTTLS_PORT (465 and 587 in production).',
    );
  const submits = (role === 'submission' || role === 'all') && submissionConfigured;
  const serves = role === 'api' || role === 'all';
  const receives = (role === 'inbound' || role === 'all') && config.POSTLANE_INBOUND_PORT !== undefined;
  // Listen first: a port that is taken stops the process at once, and while the database is away
  // callers get 503 service_unavailable rather than a refused connection. A worker-only or
  // inbound-only process listens only when asked to, and then serves only its metrics.
  const port = serves ? config.POSTLANE_PORT : config.POSTLANE_METRICS_PORT || null;
  let handle: RequestListener = answerUnavailable;
  let server: Server | null = null;
  let url: string | null = null;
  if (port !== null) {
    server = createHttpServer((req, res) => handle(req, res), config);
    server.listen(port, config.POSTLANE_HOST);
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([err]) => Promise.reject(err as Error)),
    ]);
    url = `http://${config.POSTLANE_HOST.includes(':') ? `[${config.POSTLANE_HOST}]` : config.POSTLANE_HOST}:${(server.address() as AddressInfo).port}`;
  }
  const closeServer = async () => {
    if (!server) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    server.closeAllConnections();
  };

  let orm: MikroORM;
  let jobs: AgendaJobs;
  try {
    // A service starts before its database as often as after it: wait for as long as it takes.
    await waitForDatabase(config, logger, Number.POSITIVE_INFINITY);
    await setPooledStatementTimeout(config, logger);
    orm = await initOrm(config, { pool: serverPool(config), driverOptions: { log: knexLog(logger) } });
    const pending = await pendingMigrations(orm);
    if (pending.length > 0) {
      await orm.close();
      throw new PendingMigrationsError(pending);
    }
    jobs = new AgendaJobs(config, logger, role);
    await jobs.ready();
  } catch (err) {
    await closeServer();
    throw err;
  }
  const deps = createDeps({ config, orm, jobs, logger });
  const { providers } = deps;
  let inbound: InboundListener | null = null;
  let submission: SubmissionListener | null = null;

  let stopping: Promise<void> | null = null;
  const shutdown = () =>
    (stopping ??= (async () => {
      logger.info({ role }, 'shutting down');
      await inbound?.close();
      await submission?.close();
      await closeServer();
      await jobs.stop(config.POSTLANE_SHUTDOWN_GRACE_SECONDS * 1000);
      await providers.close();
      await deps.mailWork.close();
      await deps.apiLogs.flush();
      await orm.close();
      logger.info({ role }, 'stopped');
    })());

  try {
    if (server) {
      const app = (serves ? createApp(deps) : createMetricsApp(deps)).callback();
      // Koa answers its own errors; a rejection here would be a bug in Koa, logged rather than fatal.
      handle = (req, res) => {
        app(req, res).catch((err: unknown) => logger.error({ err: errorFields(err) }, 'request handler failed'));
      };
    }
    if (role === 'worker' || role === 'all') await jobs.start(deps, jobDefinitions);
    // Once the database answers: until then senders find the port closed and retry, as with any MX.
    if (receives)
      inbound = await startInboundListener(deps, {
        host: config.POSTLANE_INBOUND_HOST,
        port: config.POSTLANE_INBOUND_PORT,
      });
    if (submits) submission = await startSubmissionListener(deps);
  } catch (err) {
    await shutdown().catch(() => {});
    throw err;
  }
  const inboundPort = inbound?.port ?? null;
  const submissionPorts = submission?.ports ?? null;
  logger.info(
    { role, url, inboundPort, submissionPorts, regions: providers.regions, worker: jobs.name },
    'postlane started',
  );
  return { deps, url, inboundPort, submissionPorts, shutdown };
}

/** What the port answers until the database does: the error envelope, and when to try again. */
function answerUnavailable(_req: IncomingMessage, res: ServerResponse): void {
  const err = serviceUnavailable();
  res.writeHead(err.statusCode, {
    'content-type': 'application/json; charset=utf-8',
    'retry-after': String(err.retryAfterSeconds),
  });
  res.end(JSON.stringify(err.toJSON()));
}

/** SIGTERM and SIGINT drain and exit 0; an unhandled rejection exits 1 so the supervisor restarts us. */
export function exitOnSignals(appliance: Appliance, logger: Logger): void {
  const stop = (signal: string) => {
    logger.info({ signal }, 'signal received');
    appliance.shutdown().then(
      () => process.exit(0),
      (err: Error) => {
        logger.error({ err: err.message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

export function exitOnUnhandledRejection(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.fatal(
      { err: reason instanceof Error ? { message: reason.message, stack: reason.stack } : String(reason) },
      'unhandled rejection',
    );
    process.exit(1);
  });
}
