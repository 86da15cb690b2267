import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Resend } from 'resend';
import { RequestContext } from '@mikro-orm/core';
import { afterAll, beforeAll, inject } from 'vitest';
import { type Config, loadConfig } from '../../config/index.js';
import { serverPool } from '../../config/mikro-orm.js';
import { createApp } from '../../server/app.js';
import { initOrm, setPooledStatementTimeout } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { AgendaJobs, type JobQueue, jobDefinitions, RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { Domain } from '../../server/entities/index.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { createDomain } from '../../server/services/domains/create-domain.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { appDatabaseEnv, createTestDatabase } from './db.js';
import { TEST_SECRET_KEY } from './secrets.js';

export interface TestAppOptions {
  env?: Record<string, string>;
  /** `recording` asserts enqueues without running them; `agenda` enqueues for real; `worker` also runs jobs here. */
  jobs?: 'recording' | 'agenda' | 'worker';
  /** Where the app's log lines go (stdout by default), for tests that read them. */
  logDestination?: { write: (line: string) => void };
}

/** The real app on a real socket over a fresh database of its own. */
export async function startTestApp(options: TestAppOptions = {}) {
  const database = await createTestDatabase(inject('templateDatabase'));
  // Listening first, so the URLs the app hands out (download URLs) lead back to it unless a test says otherwise.
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config: Config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    ...appDatabaseEnv(database.url),
    POSTLANE_PUBLIC_URL: url,
    POSTLANE_LOG_LEVEL: process.env.POSTLANE_TEST_LOG_LEVEL ?? 'silent',
    POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
    ...options.env,
  });
  const logger = createLogger(config.POSTLANE_LOG_LEVEL, options.logDestination);
  // As `postlane serve` boots (server/main.ts).
  await setPooledStatementTimeout(config, logger);
  const orm = await initOrm(config, { pool: serverPool(config) });
  const mode = options.jobs ?? 'recording';
  const agenda = mode === 'recording' ? null : new AgendaJobs(config, logger, `test-${mode}`);
  await agenda?.ready();
  const jobs: JobQueue = agenda ?? new RecordingJobQueue();
  const deps = createDeps({ config, orm, jobs, logger });
  if (agenda && mode === 'worker') await agenda.start(deps, jobDefinitions);

  server.on('request', createApp(deps).callback());

  /** Runs a service outside HTTP with its own EntityManager, as a job or the CLI would. */
  const run = <T>(fn: () => Promise<T>) => RequestContext.create(orm.em, fn);

  return {
    url,
    deps,
    config,
    databaseUrl: database.url,
    recorded: jobs instanceof RecordingJobQueue ? jobs.jobs : [],
    wakes: jobs instanceof RecordingJobQueue ? jobs.wakes : [],
    run,
    /**
     * A new team with one key of the given permission: every test works inside its own team.
     * `verifiedDomains` are added and marked verified without DNS, for sends through a relay;
     * `receivingDomains` likewise, with receiving enabled, for mail through the inbound listener.
     */
    async createTeamWithKey(
      permission: 'full_access' | 'sending_access' = 'full_access',
      { verifiedDomains = [], receivingDomains = [] }: { verifiedDomains?: string[]; receivingDomains?: string[] } = {},
    ) {
      return run(async () => {
        const team = await createTeam(deps, { name: `Team ${Math.random().toString(36).slice(2, 8)}` });
        for (const name of [...verifiedDomains, ...receivingDomains]) {
          const domain = await createDomain(deps, team.id, { name });
          await orm.em.nativeUpdate(
            Domain,
            { id: domain.id },
            {
              status: 'verified',
              verifiedAt: new Date(),
              nextCheckAt: null,
              receiving: receivingDomains.includes(name),
            },
          );
        }
        deps.senderDomains.evict(team.id);
        const { apiKey, token } = await createApiKey(deps, team.id, { name: 'test', permission });
        return { teamId: team.id, keyId: apiKey.id, token };
      });
    },
    /** The official SDK pointed at this app as a user points it: through RESEND_BASE_URL. */
    sdk(token: string): Resend {
      process.env.RESEND_BASE_URL = url;
      try {
        return new Resend(token);
      } finally {
        delete process.env.RESEND_BASE_URL;
      }
    },
    async request(
      method: string,
      path: string,
      init: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
    ) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...init.headers };
      if (init.token) headers.authorization = `Bearer ${init.token}`;
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text };
    },
    /** How many emails of any team have a subject matching the SQL LIKE `pattern` (`%` for any text). */
    async countEmails(pattern: string) {
      const rows = await orm.em
        .fork()
        .getConnection()
        .execute<{ n: string }[]>('SELECT count(*) AS n FROM email WHERE subject LIKE ?', [pattern]);
      return Number(rows[0]!.n);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await agenda?.stop(5_000);
      await deps.providers.close();
      await deps.mailWork.close();
      await deps.apiLogs.flush();
      await orm.close();
      await database.drop();
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;

/** The test app a file shares, with the team and full-access key its tests work in. */
export type SharedTestApp = TestApp & { token: string; teamId: string; keyId: string };

/** What `useTestApp` starts: the app's options, and the domains its shared team has verified or receives on. */
export interface UseTestAppOptions extends TestAppOptions {
  team?: { verifiedDomains?: string[]; receivingDomains?: string[] };
}

/**
 * Starts one app for the calling file (beforeAll), creates a team with a full-access key in it, and closes
 * the app after the file (afterAll). The answer stands for the app once beforeAll has run. Options that
 * depend on what an earlier beforeAll started (a sink's URL) are given as a function, called then; that
 * earlier hook's afterAll runs after the app is closed.
 */
export function useTestApp(options: UseTestAppOptions | (() => UseTestAppOptions) = {}): SharedTestApp {
  let started: SharedTestApp | undefined;
  beforeAll(async () => {
    const { team, ...appOptions } = typeof options === 'function' ? options() : options;
    const app = await startTestApp(appOptions);
    started = Object.assign(app, await app.createTeamWithKey('full_access', team));
  });
  afterAll(() => started?.close());
  return new Proxy({} as SharedTestApp, {
    get(_target, property) {
      if (!started) throw new Error('useTestApp(): the app is used before beforeAll started it');
      return Reflect.get(started, property) as unknown;
    },
  });
}
