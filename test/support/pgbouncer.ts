import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TestSetupError } from './os-tools.js';
import { freePort } from './throwaway-cluster.js';

export interface PgBouncer {
  port: number;
  /** The URL of `database` through the pooler (same user as the server URL). */
  url: (database: string) => string;
  /** Kills it (SIGTERM: immediate shutdown) and removes its folder. */
  stop: () => Promise<void>;
}

/** Debian's (1.18 on Debian 12), installed by the global setup (os-tools.ts). */
const PGBOUNCER = '/usr/sbin/pgbouncer';

/**
 * A PgBouncer of the caller's own in front of the server `serverUrl` names, as operators run it for
 * Postlane: `pool_mode = transaction`, every database passed through, trust auth, a free loopback
 * port, its config in a temp folder. It refuses to run as root, so as root it drops to `postgres`.
 */
export async function startPgBouncer(
  serverUrl: string,
  { poolSize = 30 }: { poolSize?: number } = {},
): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(join(tmpdir(), 'postlane-pgbouncer-'));
  const port = await freePort();
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 5000',
      // Server connections to a test database dropped at the end of its file are let go soon.
      'server_idle_timeout = 10',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, id('-u'), id('-g'));
  }
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const url = (database: string) => {
    const through = new URL(serverUrl);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    through.pathname = `/${database}`;
    return through.toString();
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Bounded: 100 tries, 100 ms apart.
  for (let attempt = 0; ; attempt += 1) {
    const client = new pg.Client({ connectionString: url('postgres'), connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      break;
    } catch (err) {
      if (attempt >= 100 || child.exitCode !== null) {
        const log = (() => {
          try {
            return readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
          } catch {
            return '';
          }
        })();
        await stop();
        throw new TestSetupError(
          `PgBouncer did not start on 127.0.0.1:${port}: ${(err as Error).message}\n${stderr}${log}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => {});
    }
  }
  return { port, url, stop };
}
