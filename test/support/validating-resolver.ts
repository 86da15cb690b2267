import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DnssecResolver } from '../../server/dns/dnssec-resolver.js';
import { TestSetupError } from './os-tools.js';
import { freePort } from './throwaway-cluster.js';

/** Debian's, installed by the global setup of the system project (os-tools.ts). */
const NSD = '/usr/sbin/nsd';
const UNBOUND = '/usr/sbin/unbound';

export interface TestZone {
  /** The zone's name, e.g. `dane.test`; `ns.<name>` gets 127.0.0.1 and is its name server. */
  name: string;
  /** Records in zone-file syntax, names relative to the zone (`mx IN A 127.0.0.21`). */
  records: string[];
  /** Signed with a key of the test's own, which the resolver trusts as the zone's trust anchor. */
  signed: boolean;
  /** Records appended after signing: no RRSIG covers them, so the resolver finds them bogus. */
  bogus?: string[];
}

export interface ValidatingResolver {
  /** For POSTLANE_DNS_SERVERS: Unbound on loopback. */
  address: string;
  stop: () => Promise<void>;
}

/**
 * A real validating resolver on loopback, as docs/direct-delivery.md asks operators to run for
 * DANE: Unbound, with the signed zones' own key as trust anchor (no root: the zones are the test's),
 * asking NSD, which serves the zones on another loopback port. Zones are signed by ldns-signzone
 * (ldnsutils), valid from a day ago to a week ahead. So the AD bit is Unbound's own verdict, and a
 * record without a valid signature gets SERVFAIL, as in production.
 */
export async function startValidatingResolver(zones: TestZone[]): Promise<ValidatingResolver> {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-dnssec-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const anchors: string[] = [];
    for (const zone of zones) anchors.push(...writeZone(dir, zone));
    const [nsdPort, unboundPort] = [await freePort(), await freePort()];
    writeFileSync(
      join(dir, 'nsd.conf'),
      [
        'server:',
        '  ip-address: 127.0.0.1',
        `  port: ${nsdPort}`,
        '  username: ""',
        '  chroot: ""',
        `  zonesdir: "${dir}"`,
        `  pidfile: "${dir}/nsd.pid"`,
        `  zonelistfile: "${dir}/zone.list"`,
        `  xfrdfile: "${dir}/xfrd.state"`,
        '  database: ""',
        '  do-ip6: no',
        'remote-control:',
        '  control-enable: no',
        ...zones.flatMap((zone) => ['zone:', `  name: ${zone.name}`, `  zonefile: ${zoneFile(zone)}`]),
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'unbound.conf'),
      [
        'server:',
        '  interface: 127.0.0.1',
        `  port: ${unboundPort}`,
        '  do-ip6: no',
        '  username: ""',
        '  chroot: ""',
        `  directory: "${dir}"`,
        `  pidfile: "${dir}/unbound.pid"`,
        '  use-syslog: no',
        '  logfile: ""',
        '  do-daemonize: no',
        '  module-config: "validator iterator"',
        ...anchors.map((anchor) => `  trust-anchor-file: "${anchor}"`),
        '  do-not-query-localhost: no',
        '  access-control: 127.0.0.0/8 allow',
        // Unbound answers for test. itself (RFC 6761) unless told not to.
        '  local-zone: "test." nodefault',
        ...zones.flatMap((zone) => ['stub-zone:', `  name: "${zone.name}"`, `  stub-addr: 127.0.0.1@${nsdPort}`]),
        'remote-control:',
        '  control-enable: no',
        '',
      ].join('\n'),
    );
    children.push(spawn(NSD, ['-d', '-c', join(dir, 'nsd.conf')], { stdio: 'ignore' }));
    await answering(`127.0.0.1:${nsdPort}`, zones[0]!.name, children[0]!);
    children.push(spawn(UNBOUND, ['-d', '-c', join(dir, 'unbound.conf')], { stdio: 'ignore' }));
    await answering(`127.0.0.1:${unboundPort}`, zones[0]!.name, children[1]!);
    return { address: `127.0.0.1:${unboundPort}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const zoneFile = (zone: TestZone) => `${zone.name}.zone${zone.signed ? '.signed' : ''}`;

/** The zone file (signed, with its bogus records after), and the trust anchor files of a signed zone. */
function writeZone(dir: string, zone: TestZone): string[] {
  const file = join(dir, `${zone.name}.zone`);
  writeFileSync(
    file,
    [
      `$ORIGIN ${zone.name}.`,
      '$TTL 300',
      `@ IN SOA ns.${zone.name}. hostmaster.${zone.name}. 1 3600 600 86400 60`,
      `@ IN NS ns.${zone.name}.`,
      'ns IN A 127.0.0.1',
      ...zone.records,
      '',
    ].join('\n'),
  );
  if (!zone.signed) return [];
  const run = (file: string, args: string[]) => execFileSync(file, args, { cwd: dir, stdio: 'pipe' }).toString();
  const key = run('ldns-keygen', ['-a', 'ECDSAP256SHA256', '-k', zone.name]).trim();
  const day = 86_400;
  const now = Math.floor(Date.now() / 1000);
  run('ldns-signzone', ['-i', String(now - day), '-e', String(now + 7 * day), file, key]);
  if (zone.bogus) appendFileSync(`${file}.signed`, `${zone.bogus.join('\n')}\n`);
  return [join(dir, `${key}.key`)];
}

/** Waits (10 s at most) until the server answers for `zone`, failing at once if it exits. */
async function answering(address: string, zone: string, child: ChildProcess): Promise<void> {
  const probe = new DnssecResolver({ POSTLANE_DNS_SERVERS: [address], POSTLANE_DNS_TIMEOUT_MS: 200 }, Date.now, 0);
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if (child.exitCode !== null) throw new TestSetupError(`${child.spawnfile} exited with ${child.exitCode}`);
    if ((await probe.query(`ns.${zone}`, 'A')).kind === 'found') return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new TestSetupError(`${child.spawnfile} did not answer for ${zone} on ${address} within 10 s`);
}
