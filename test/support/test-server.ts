import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { aptInstall, TestSetupError } from './os-tools.js';

/** The development machines' server: trust auth on loopback (docs/development.md). */
const TRUST_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestServer {
  adminUrl: string;
  /** Removes what the run provisioned (nothing for a server it found). */
  stop: () => Promise<void>;
}

/**
 * The PostgreSQL server a test run creates its databases on: POSTLANE_TEST_ADMIN_URL when given,
 * else a server on 127.0.0.1:5432 that lets the postgres role in without a password, else a
 * throwaway cluster of the run's own. A production server's authentication is never touched.
 */
export async function startTestServer(): Promise<TestServer> {
  const given = process.env.POSTLANE_TEST_ADMIN_URL;
  if (given) {
    await connects(given).catch((err: Error) => {
      throw new TestSetupError(`POSTLANE_TEST_ADMIN_URL does not answer: ${err.message}`);
    });
    return { adminUrl: given, stop: async () => {} };
  }
  if (
    await connects(TRUST_URL).then(
      () => true,
      () => false,
    )
  )
    return { adminUrl: TRUST_URL, stop: async () => {} };
  return startThrowawayCluster();
}

/** Connects without ever sending a password: a server asking for one is not usable. */
async function connects(url: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5_000,
    password: () => {
      throw new Error('the server asks for a password');
    },
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => {});
  }
}

/** Debian's server binaries, newest version first; installed with apt when missing and possible. */
function postgresBin(): string {
  const find = () => {
    const root = '/usr/lib/postgresql';
    const versions = existsSync(root)
      ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      : [];
    const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
    return newest ? join(root, newest, 'bin') : null;
  };
  const found = find();
  if (found) return found;
  aptInstall(['postgresql'], 'PostgreSQL (for the throwaway test server)');
  return (
    find() ??
    (() => {
      throw new TestSetupError('the postgresql package installed no /usr/lib/postgresql/*/bin/initdb');
    })()
  );
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * initdb + pg_ctl into a temporary folder on a free loopback port, trust auth, removed by stop().
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` user (or `nobody`).
 */
async function startThrowawayCluster(): Promise<TestServer> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'postlane-test-pg-'));
  const asUser = userInfo().uid === 0 ? unprivilegedUser() : null;
  if (asUser) chownSync(dir, asUser.uid, asUser.gid);
  const run = (command: string, args: string[]) =>
    execFileSync(asUser ? 'runuser' : command, asUser ? ['-u', asUser.name, '--', command, ...args] : args, {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TZ: 'UTC', LC_ALL: 'C.UTF-8' },
    });
  const data = join(dir, 'data');
  const port = await freePort();
  try {
    run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    // Tuned for throwaway data: no fsync, and connections for parallel test files.
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
    run(join(bin, 'pg_ctl'), ['start', '-w', '-t', '60', '-D', data, '-l', join(dir, 'server.log'), '-o', options]);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new TestSetupError(`could not start a throwaway PostgreSQL with ${bin}: ${stderr || (err as Error).message}`);
  }
  process.stderr.write(`[test] throwaway PostgreSQL on 127.0.0.1:${port} (${dir})\n`);
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      try {
        run(join(bin, 'pg_ctl'), ['stop', '-m', 'immediate', '-D', data]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function unprivilegedUser(): { name: string; uid: number; gid: number } {
  for (const name of ['postgres', 'nobody']) {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    try {
      return { name, uid: id('-u'), gid: id('-g') };
    } catch {
      // No such user: try the next.
    }
  }
  throw new TestSetupError(
    'running as root, and neither a postgres nor a nobody user exists to run the throwaway PostgreSQL',
  );
}
