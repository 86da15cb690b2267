import { execFile } from 'node:child_process';
import { appendFile, chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The command prefix that runs a program in the network namespace `netns` (made by `ip netns add`),
 * exec'd in place so signals reach it. nsenter enters the network namespace alone: `ip netns exec`
 * and `ip -n` also remount / and /sys, which fails inside a chroot (the fresh-box test runs the
 * suite in one).
 */
export const inNetns = (netns: string) => ['nsenter', `--net=/run/netns/${netns}`];

/** `command` as run on the host `netns` (see inNetns), or as it is when there is none. */
export const onHost = (netns: string | undefined, command: string[]): string[] =>
  netns ? [...inNetns(netns), ...command] : command;

const run = promisify(execFile);
const PG_BIN = process.env.POSTLANE_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A port nobody listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ThrowawayCluster {
  /** The data directory (in a folder of its own that `remove` deletes). */
  data: string;
  /** Runs a program as the cluster's owner (the `postgres` user when we are root), in its folder. */
  exec: (file: string, args: string[]) => Promise<{ stdout: string; stderr: string }>;
  /** postgres://postgres@<host>:port/<name> */
  url: (database: string) => string;
  port: number;
  /** `pg_ctl restart -m fast`: every connection is cut, the server is back when this resolves. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server if it runs and removes its folder. */
  remove(): Promise<void>;
}

/** Where a throwaway cluster runs: by default on loopback in our own network namespace. */
export interface ClusterPlacement {
  /** A network namespace (`ip netns`) the server runs in, as a host of its own. */
  netns?: string;
  /** The address it listens on (and its URL names). */
  host?: string;
}

/** What the cluster starts from: a fresh initdb unless `fill` puts a data directory in place (a restored backup). */
export interface ClusterSetup extends ClusterPlacement {
  /** Lines appended to postgresql.conf before the first start (WAL archiving, for one). */
  settings?: string;
  /** Fills the empty data directory (mode 0700, owned by the cluster's owner) instead of initdb. */
  fill?: (data: string, exec: ThrowawayCluster['exec']) => Promise<unknown>;
}

/**
 * A PostgreSQL cluster of our own in a temp folder on a free port, for tests and benchmarks that
 * stop and restart the database: never the machine's shared server. PostgreSQL refuses to run
 * as root, so as root the binaries run as the `postgres` user.
 */
export async function createThrowawayCluster({
  netns,
  host = '127.0.0.1',
  settings,
  fill,
}: ClusterSetup = {}): Promise<ThrowawayCluster> {
  const asRoot = process.getuid?.() === 0;
  const dir = await mkdtemp(join(tmpdir(), 'postlane-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout), Number(gid));
  }
  await chmod(dir, 0o700);
  const execFile = (program: string, args: string[]) => {
    const command = asRoot ? ['runuser', '-u', 'postgres', '--', program, ...args] : [program, ...args];
    const [file, ...rest] = onHost(netns, command);
    return run(file!, rest, { cwd: dir });
  };
  const exec = (bin: string, args: string[]) => execFile(join(PG_BIN, bin), args);
  if (fill) {
    await execFile('mkdir', ['-m', '0700', data]);
    await fill(data, execFile);
  } else
    await exec('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  if (settings) await appendFile(join(data, 'postgresql.conf'), `\n${settings}\n`);
  // initdb trusts loopback only; on an address of its own, the hosts of the subnets it sits on too.
  if (host !== '127.0.0.1') await appendFile(join(data, 'pg_hba.conf'), 'host all all samenet trust\n');
  const port = await freePort();
  // Durability does not matter for a throwaway: fsync off keeps the shared disk quiet.
  const options = `-p ${port} -k ${dir} -c listen_addresses=${host} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const ctl = (action: string, ...extra: string[]) =>
    exec('pg_ctl', [action, '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), ...extra]);
  const start = async () => void (await ctl('start', '-o', options));
  await start();
  let removed = false;
  return {
    data,
    exec: execFile,
    port,
    url: (database) => `postgres://postgres@${host}:${port}/${database}`,
    restart: async () => void (await ctl('restart', '-m', 'fast', '-o', options)),
    stop: async () => void (await ctl('stop', '-m', 'fast')),
    start,
    async remove() {
      if (removed) return;
      removed = true;
      await ctl('stop', '-m', 'immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
