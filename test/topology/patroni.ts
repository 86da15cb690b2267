/**
 * A production-shaped PostgreSQL of the test's own making, from Debian's packages: one etcd member,
 * two Patroni-managed PostgreSQL 15 instances (a primary and a synchronous streaming standby) and
 * HAProxy routing to whichever answers Patroni's `GET /primary` with 200. Everything listens on free
 * loopback ports and lives in one temp folder; PostgreSQL refuses to run as root, so as root every
 * process runs as the `postgres` user. etcd, Patroni and HAProxy come from Debian's etcd-server,
 * patroni and haproxy, which the test setup installs (test/support/os-tools.ts).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../support/throwaway-cluster.js';
import { until, untilFound } from '../support/until.js';

const run = promisify(execFile);
const PG_BIN = process.env.POSTLANE_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Patroni's timings: the leader key lives 10 s, a member looks every 2 s, a DCS call gives up after 4 s. */
export const PATRONI_TIMINGS = { ttl: 10, loop_wait: 2, retry_timeout: 4 };

interface Member {
  name: string;
  pgPort: number;
  restPort: number;
  data: string;
  patroni: ChildProcess | null;
  killed: boolean;
  log: string[];
}

export interface PatroniTopology {
  /** postgres://postgres@127.0.0.1:<haproxy>/<database>: what Postlane's `DATABASE_URL` points at. */
  url: (database: string) => string;
  /** The member whose Patroni answers `GET /primary` with 200, if any. */
  primary: () => Promise<string | null>;
  /**
   * The primary's host dies: its Patroni and its postmaster are SIGKILLed (the backends follow the
   * postmaster), nothing is shut down cleanly. Returns the member's name.
   */
  killPrimary: () => Promise<string>;
  /** Waits (bounded) until another member than `old` is primary and HAProxy routes writes to it. */
  waitForPromotion: (old: string, timeoutMs?: number) => Promise<string>;
  /** Recent Patroni and HAProxy output, for a failure message. */
  logs: () => string;
  remove: () => Promise<void>;
}

async function restStatus(port: number, path: string): Promise<number> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** A wait's failure message: what never happened, with the topology's recent output. */
const never = (what: string, logs: () => string) => () => `${what}; recent output:\n${logs()}`;

// In a chroot `/` is no mount point, so unshare cannot make it private: only the mount holding
// /dev/shm is made private (in the new namespace), so the tmpfs never shows outside it.
const SHM_THEN_PATRONI =
  'mount --make-rprivate "$(findmnt -nf -o TARGET --target /dev/shm)" && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec setpriv --reuid="$0" --regid="$1" --init-groups "$2" "$3"';

export async function startPatroniTopology(): Promise<PatroniTopology> {
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot
    ? {
        uid: Number((await run('id', ['-u', 'postgres'])).stdout),
        gid: Number((await run('id', ['-g', 'postgres'])).stdout),
      }
    : {};
  const dir = await mkdtemp(join(tmpdir(), 'postlane-patroni-'));
  if (owner.uid !== undefined) await chown(dir, owner.uid, owner.gid!);
  await chmod(dir, 0o700);

  // Patroni (Python's multiprocessing) takes POSIX semaphores in /dev/shm, which every booted system
  // mounts world-writable; a chroot may not (the fresh-box check binds /dev without that tmpfs).
  // Then Patroni, and the postgres it starts, get a private one in a mount namespace of their own.
  const privateShm = owner.uid !== undefined && ((await stat('/dev/shm')).mode & 0o1777) !== 0o1777;
  const patroniCommand = (file: string): [string, string[], boolean] =>
    privateShm
      ? [
          'unshare',
          [
            '--mount',
            '--propagation',
            'unchanged',
            'sh',
            '-c',
            SHM_THEN_PATRONI,
            String(owner.uid),
            String(owner.gid),
            '/usr/bin/patroni',
            file,
          ],
          false,
        ]
      : ['/usr/bin/patroni', [file], true];

  const processes: ChildProcess[] = [];
  const start = (command: string, args: string[], log: string[], asOwner = true) => {
    // Its own process group, so a kill of the group reaches whatever it forked (not postgres: Patroni setsid()s it).
    const child = spawn(command, args, {
      ...(asOwner ? owner : {}),
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: dir, LANG: 'C.UTF-8' },
    });
    const keep = (chunk: Buffer) => {
      log.push(chunk.toString());
      if (log.length > 200) log.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    processes.push(child);
    return child;
  };
  const [etcdClient, etcdPeer, haproxyPort] = [await freePort(), await freePort(), await freePort()];
  const members: Member[] = [];
  for (const name of ['pg0', 'pg1'])
    members.push({
      name,
      pgPort: await freePort(),
      restPort: await freePort(),
      data: join(dir, name),
      patroni: null,
      killed: false,
      log: [],
    });
  const etcdLog: string[] = [];
  const haproxyLog: string[] = [];
  const logs = () =>
    [
      ...members.map((m) => `--- patroni ${m.name}\n${m.log.join('').slice(-3_000)}`),
      `--- haproxy\n${haproxyLog.join('').slice(-1_500)}`,
      `--- etcd\n${etcdLog.join('').slice(-1_000)}`,
    ].join('\n');

  let removed = false;
  const remove = async () => {
    if (removed) return;
    removed = true;
    for (const member of members) await killMember(member);
    for (const child of processes) {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-child.pid!, 'SIGKILL');
        await once(child, 'exit');
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  const killMember = async (member: Member) => {
    // Once only: afterwards postmaster.pid is stale, and its pid may be another process's by now.
    if (member.killed) return;
    member.killed = true;
    const patroni = member.patroni;
    if (patroni && patroni.exitCode === null && patroni.signalCode === null) {
      process.kill(-patroni.pid!, 'SIGKILL');
      await once(patroni, 'exit');
    }
    // The postmaster is in a session of its own; its pid is the first line of postmaster.pid.
    const pid = Number((await readFile(join(member.data, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };

  try {
    start(
      '/usr/bin/etcd',
      [
        '--name',
        'etcd0',
        '--data-dir',
        join(dir, 'etcd'),
        '--listen-client-urls',
        `http://127.0.0.1:${etcdClient}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${etcdClient}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${etcdPeer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${etcdPeer}`,
        '--initial-cluster',
        `etcd0=http://127.0.0.1:${etcdPeer}`,
        '--unsafe-no-fsync',
      ],
      etcdLog,
    );
    await until(
      async () => (await restStatus(etcdClient, '/health')) === 200,
      30_000,
      never('etcd did not answer', logs),
    );

    const scope = `postlane-${process.pid}`;
    for (const member of members) {
      // YAML is a superset of JSON: Patroni reads this as its configuration file.
      const config = {
        scope,
        name: member.name,
        restapi: { listen: `127.0.0.1:${member.restPort}`, connect_address: `127.0.0.1:${member.restPort}` },
        etcd3: { host: `127.0.0.1:${etcdClient}` },
        bootstrap: {
          dcs: {
            ...PATRONI_TIMINGS,
            maximum_lag_on_failover: 1_048_576,
            // Without it a commit acknowledged by the primary may be missing on the standby it dies
            // for: an accepted email lost (docs/topology.md).
            synchronous_mode: true,
            postgresql: {
              use_pg_rewind: true,
              use_slots: true,
              parameters: { max_connections: 200, wal_keep_size: '128MB' },
            },
          },
          initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
          pg_hba: [
            'local all all trust',
            'host replication replicator 127.0.0.1/32 trust',
            'host all all 127.0.0.1/32 trust',
          ],
        },
        postgresql: {
          listen: `127.0.0.1:${member.pgPort}`,
          connect_address: `127.0.0.1:${member.pgPort}`,
          data_dir: member.data,
          bin_dir: PG_BIN,
          pgpass: join(dir, `${member.name}.pgpass`),
          authentication: {
            superuser: { username: 'postgres' },
            replication: { username: 'replicator' },
            rewind: { username: 'postgres' },
          },
          // A process kill, not a host crash, is what this topology survives: the page cache keeps what fsync would.
          parameters: { unix_socket_directories: dir, fsync: 'off' },
        },
      };
      const file = join(dir, `${member.name}.yml`);
      await writeFile(file, JSON.stringify(config));
      if (owner.uid !== undefined) await chown(file, owner.uid, owner.gid!);
      const [command, args, asOwner] = patroniCommand(file);
      member.patroni = start(command, args, member.log, asOwner);
      // The first member bootstraps the cluster; the second clones it once there is a leader.
      if (member === members[0])
        await until(
          async () => (await restStatus(member.restPort, '/primary')) === 200,
          90_000,
          never('the first Patroni member never became primary', logs),
        );
    }
    await until(
      async () => (await restStatus(members[1]!.restPort, '/sync')) === 200,
      90_000,
      never('the standby never became a synchronous replica', logs),
    );

    const haproxyConfig = join(dir, 'haproxy.cfg');
    await writeFile(
      haproxyConfig,
      [
        'global',
        '  maxconn 1000',
        'defaults',
        '  mode tcp',
        '  timeout connect 2s',
        '  timeout client 30m',
        '  timeout server 30m',
        '  timeout check 2s',
        'listen postgres',
        `  bind 127.0.0.1:${haproxyPort}`,
        '  option httpchk GET /primary',
        '  http-check expect status 200',
        // A check a second; down after two failures, and then its sessions are cut, not left to hang.
        '  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions',
        ...members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} check port ${m.restPort}`),
        '',
      ].join('\n'),
    );
    start('/usr/sbin/haproxy', ['-f', haproxyConfig, '-db'], haproxyLog);

    const url = (database: string) => `postgres://postgres@127.0.0.1:${haproxyPort}/${database}`;
    const primary = async () => {
      for (const member of members) if ((await restStatus(member.restPort, '/primary')) === 200) return member.name;
      return null;
    };
    /** The port of the server HAProxy hands a new connection to, when it is a writable primary. */
    const routedPrimaryPort = async () => {
      const client = new pg.Client({ connectionString: url('postgres'), connectionTimeoutMillis: 2_000 });
      client.on('error', () => {});
      try {
        await client.connect();
        const { rows } = await client.query<{ port: number; standby: boolean }>(
          'SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby',
        );
        return rows[0]!.standby ? null : rows[0]!.port;
      } catch {
        return null;
      } finally {
        await client.end().catch(() => {});
      }
    };
    // HAProxy starts with every server up until its checks say otherwise: one connection reaching the
    // primary proves nothing while the standby is still in the rotation, so several in a row must.
    const routedOnlyToPrimary = async () => {
      const ports = new Set<number | null>();
      for (let i = 0; i < 2 * members.length + 2; i += 1) ports.add(await routedPrimaryPort());
      const [port] = ports;
      return ports.size === 1 && port !== null ? port : undefined;
    };
    const routed = await untilFound(
      routedOnlyToPrimary,
      never('HAProxy never routed to the primary alone', logs),
      30_000,
    );
    if (routed !== members[0]!.pgPort)
      throw new Error(`HAProxy routed to port ${routed}, not the primary's ${members[0]!.pgPort}`);

    return {
      url,
      primary,
      logs,
      async killPrimary() {
        const name = await primary();
        const member = members.find((m) => m.name === name);
        if (!member) throw new Error(`no primary to kill\n${logs()}`);
        await killMember(member);
        return member.name;
      },
      async waitForPromotion(old, timeoutMs = 90_000) {
        const promoted = await untilFound(
          async () => {
            const name = await primary();
            return name !== null && name !== old ? name : undefined;
          },
          never(`no member took over from ${old}`, logs),
          timeoutMs,
        );
        const port = members.find((m) => m.name === promoted)!.pgPort;
        await until(
          async () => (await routedPrimaryPort()) === port,
          timeoutMs,
          never(`HAProxy never routed to ${promoted}`, logs),
        );
        return promoted;
      },
      remove,
    };
  } catch (err) {
    await remove();
    throw err;
  }
}
