/**
 * Hosts of the test's own making: each a network namespace (`ip netns`) with its own addresses,
 * cabled to two bridges in a namespace of their own. The front network is where clients (the test
 * process, through a veth into the root namespace) reach the API hosts; the back network is where the
 * API and worker hosts reach the database host, and the workers the SMTP sink (the test process
 * again, through a second veth). A host is partitioned from the back network by taking its cable's
 * bridge port down: its packets vanish, as with a failed switch port, and nothing else changes.
 * A remote host (createRemoteHost) is simpler: one namespace cabled straight to the root namespace.
 * Nothing leaves these namespaces and loopback.
 */
import { execFile } from 'node:child_process';
import { userInfo } from 'node:os';
import { promisify } from 'node:util';
import type { Host } from '../support/chaos.js';
import { TestSetupError } from '../support/os-tools.js';
import { inNetns } from '../support/throwaway-cluster.js';
import { alive } from '../../cli/lib/pid.js';

const run = promisify(execFile);
const ip = (...args: string[]) => run('ip', args);
/** `ip` inside a namespace, without `ip -n` (see inNetns). */
const ipIn = (netns: string, ...args: string[]) => {
  const [file, ...rest] = [...inNetns(netns), 'ip', ...args];
  return run(file!, rest);
};

/** Every namespace and root-namespace link of a run starts with this and the test process's pid. */
const PREFIX = 'plmh';

export interface HostSpec {
  name: string;
  /** A cable to the front network (API hosts), besides the one to the back network every host has. */
  front?: boolean;
}

export interface Network {
  /** Each host by name: its namespace, its back-network address and the one it serves on (front when it has one). */
  hosts: Record<string, Host & { back: string }>;
  /** The test process's addresses on each network. */
  root: { front: string; back: string };
  /** Takes a host's back-network cable out (`heal` puts it back). */
  partition(host: string): Promise<void>;
  heal(host: string): Promise<void>;
  /** SIGKILLs every process in a host's namespace: the host dies. */
  killHost(host: string): Promise<number>;
  /** Kills what still runs in the namespaces and deletes them (and with them every veth of the run). */
  remove(): Promise<void>;
}

async function killAll(netns: string): Promise<number> {
  const { stdout } = await ip('netns', 'pids', netns).catch(() => ({ stdout: '' }));
  const pids = stdout.split('\n').filter(Boolean).map(Number);
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  // Bounded: a SIGKILLed process is gone within milliseconds.
  for (let i = 0; i < 100 && pids.some(alive); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.length;
}

/** Namespaces left by an earlier run that crashed (its pid is gone): their processes killed, the namespaces deleted. */
export async function removeStaleNamespaces(): Promise<string[]> {
  const { stdout } = await ip('netns', 'list');
  const stale = stdout
    .split('\n')
    .map((line) => line.split(' ')[0]!)
    .filter((name) => new RegExp(`^${PREFIX}-(\\d+)-`).test(name) && !alive(Number(name.split('-')[1])));
  for (const name of stale) {
    await killAll(name);
    await ip('netns', 'delete', name);
  }
  return stale;
}

/** Two /24s no route of this machine covers: 10.213.<2k>.0 (front) and 10.213.<2k+1>.0 (back). */
async function freeSubnets(): Promise<[string, string]> {
  const { stdout } = await ip('-4', 'route', 'show', 'table', 'all');
  for (let i = 0; i < 128; i += 1) {
    const k = (process.pid + i) % 128;
    const front = `10.213.${2 * k}`;
    const back = `10.213.${2 * k + 1}`;
    if (!stdout.includes(`${front}.`) && !stdout.includes(`${back}.`)) return [front, back];
  }
  throw new Error('no free 10.213.x.0/24 pair for the test network');
}

function requireRoot() {
  if (userInfo().uid !== 0)
    throw new TestSetupError(
      'the topology tests build network namespaces (ip netns), which needs root: run the tests as root, as CI does',
    );
}

/** A host on the far side of one cable: its namespace, its addresses, and the test process's end of the cable. */
export interface RemoteHost {
  netns: string;
  /** The addresses in the namespace, each a host of the test's to listen on. */
  addresses: string[];
  /** The root namespace's end of the cable: the address the test's processes send from. */
  local: string;
  /** Kills what runs in the namespace and deletes it (and with it the cable). */
  remove(): Promise<void>;
}

/**
 * One namespace cabled straight to the root namespace by a veth, with `count` addresses on its
 * end (a /24 of its own): the outside world's servers as one host with many addresses.
 */
export async function createRemoteHost(name: string, count: number): Promise<RemoteHost> {
  requireRoot();
  await removeStaleNamespaces();
  const [subnet] = await freeSubnets();
  const netns = `${PREFIX}-${process.pid}-${name}`;
  const local = `${subnet}.1`;
  const addresses = Array.from({ length: count }, (_, i) => `${subnet}.${i + 2}`);
  const remove = async () => {
    await killAll(netns);
    await ip('netns', 'delete', netns).catch(() => {});
  };
  try {
    await ip('netns', 'add', netns);
    await ipIn(netns, 'link', 'set', 'lo', 'up');
    const end = `${PREFIX}${process.pid}${name[0]}`;
    await ip('link', 'add', end, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns);
    await ip('addr', 'add', `${local}/24`, 'dev', end);
    await ip('link', 'set', end, 'up');
    for (const address of addresses) await ipIn(netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    await ipIn(netns, 'link', 'set', 'eth0', 'up');
    return { netns, addresses, local, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

export async function createNetwork(specs: HostSpec[]): Promise<Network> {
  requireRoot();
  await removeStaleNamespaces();
  const [front, back] = await freeSubnets();
  const ns = (name: string) => `${PREFIX}-${process.pid}-${name}`;
  const net = ns('net');
  const created: string[] = [];
  const remove = async () => {
    for (const name of created.reverse()) {
      await killAll(name);
      await ip('netns', 'delete', name).catch(() => {});
    }
  };
  try {
    await ip('netns', 'add', net);
    created.push(net);
    for (const bridge of ['front', 'back']) {
      await ipIn(net, 'link', 'add', bridge, 'type', 'bridge');
      await ipIn(net, 'link', 'set', bridge, 'up');
    }
    /** A veth from `inNs` (null: the root namespace) to a port of `bridge`, with `address` on its end. */
    const cable = async (inNs: string | null, end: string, port: string, bridge: string, address: string) => {
      const here = (...args: string[]) => (inNs ? ipIn(inNs, ...args) : ip(...args));
      await here('link', 'add', end, 'type', 'veth', 'peer', 'name', port, 'netns', net);
      await here('addr', 'add', `${address}/24`, 'dev', end);
      await here('link', 'set', end, 'up');
      await ipIn(net, 'link', 'set', port, 'master', bridge, 'up');
    };
    const root = { front: `${front}.1`, back: `${back}.1` };
    await cable(null, `${PREFIX}${process.pid}f`, 'root-f', 'front', root.front);
    await cable(null, `${PREFIX}${process.pid}b`, 'root-b', 'back', root.back);
    const hosts: Network['hosts'] = {};
    for (const [index, spec] of specs.entries()) {
      const name = ns(spec.name);
      await ip('netns', 'add', name);
      created.push(name);
      await ipIn(name, 'link', 'set', 'lo', 'up');
      const address = `${back}.${index + 2}`;
      await cable(name, 'back0', `${spec.name}-b`, 'back', address);
      const frontAddress = spec.front ? `${front}.${index + 2}` : undefined;
      if (frontAddress) await cable(name, 'front0', `${spec.name}-f`, 'front', frontAddress);
      hosts[spec.name] = { netns: name, address: frontAddress ?? address, back: address };
    }
    const port = (host: string) => `${host}-b`;
    return {
      hosts,
      root,
      partition: async (host) => void (await ipIn(net, 'link', 'set', port(host), 'down')),
      heal: async (host) => void (await ipIn(net, 'link', 'set', port(host), 'up')),
      killHost: (host) => killAll(hosts[host]!.netns),
      remove,
    };
  } catch (err) {
    await remove();
    throw err;
  }
}
