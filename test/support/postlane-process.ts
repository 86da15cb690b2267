import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appDatabaseEnv } from './db.js';
import { TEST_SECRET_KEY } from './secrets.js';
import { freePort, onHost } from './throwaway-cluster.js';

/** Short leases, job locks and sweeps, so that a worker killed by a crash test is taken over within seconds. */
export const FAST_RECOVERY_ENV = {
  POSTLANE_SEND_LEASE_SECONDS: '3',
  POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '4',
  POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1',
  POSTLANE_SWEEP_AFTER_SECONDS: '2',
  POSTLANE_SWEEP_INTERVAL_SECONDS: '2',
} as const;

const BIN = fileURLToPath(new URL('../../bin/postlane.js', import.meta.url));

/** The Node flags the installed service starts with (docs/operations.md, "Memory"): benchmarks run the service as installed. */
export { SERVICE_NODE_FLAGS } from '../../cli/services/systemd-unit.js';

export interface PostlaneProcess {
  child: ChildProcess;
  output: () => string;
  waitForOutput: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Who runs a process, and where: another user, or another host (a network namespace, entered with nsenter). */
export interface ProcessPlacement {
  uid?: number;
  gid?: number;
  netns?: string;
}

/**
 * The compiled CLI (`npm test` builds first) as a real child process with its own environment (and
 * Node options, such as `--cpu-prof`). A test database's DATABASE_URL goes through the run's
 * PgBouncer when there is one (db.ts, appDatabaseEnv), unless the test names a direct URL itself.
 */
export function spawnPostlane(
  args: string[],
  env: Record<string, string>,
  nodeOptions: string[] = [],
  { netns, ...user }: ProcessPlacement = {},
): PostlaneProcess {
  const command = [process.execPath, ...nodeOptions, BIN, ...args];
  const [file, ...rest] = onHost(netns, command);
  const child = spawn(file!, rest, {
    ...user,
    // TZ passed on: the run's time zone (test/vitest.config.ts) holds for the processes too.
    env: {
      PATH: process.env.PATH ?? '',
      TZ: process.env.TZ ?? 'UTC',
      POSTLANE_CONFIG: '/nonexistent/postlane.json',
      POSTLANE_LOG_LEVEL: 'info',
      POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
      ...env,
      ...(env.DATABASE_URL && !env.POSTLANE_DATABASE_DIRECT_URL ? appDatabaseEnv(env.DATABASE_URL) : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return {
    child,
    output: () => output,
    exited,
    async waitForOutput(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never saw ${pattern} in:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

/** Runs a CLI command to completion (as another user, given one) and returns what it printed. */
export async function runPostlane(args: string[], env: Record<string, string>, user: ProcessPlacement = {}) {
  const proc = spawnPostlane(args, env, [], user);
  let stdout = '';
  proc.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const { code } = await proc.exited;
  return { code, stdout, output: proc.output() };
}

/**
 * What `postlane service` tests start from: a folder (readable by the service's unprivileged user)
 * holding a config file for the given database, on a free loopback port.
 */
export async function serviceFolder(
  prefix: string,
  databaseUrl: string,
): Promise<{ dir: string; port: number; config: string }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({ DATABASE_URL: databaseUrl, POSTLANE_PORT: port, POSTLANE_SECRET_KEY: TEST_SECRET_KEY }),
    { mode: 0o644 },
  );
  return { dir, port, config };
}
