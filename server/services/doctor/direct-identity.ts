import { connect, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { type DNSResolver, spf } from 'mailauth';
import type { Config } from '../../../config/index.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { type SourceIdentity, sourceIdentities } from '../../providers/direct/source-ips.js';
import type { CheckResult } from './check-result.js';

/** A direct provider's source IP, with the regions whose mail it carries. */
export interface DirectSource extends SourceIdentity {
  regions: readonly string[];
}

type Dns = Pick<DnsResolver, 'query' | 'resolve'>;
type Level = 'ok' | 'warn' | 'fail';
interface Finding {
  level: Level;
  text: string;
}

const PORT_25 = 25;
/** Whose MX the port 25 probe connects to by default: one that answers on port 25 from anywhere. */
const PROBE_DOMAIN = 'gmail.com';

/** Every direct provider's source IPs; the providers that let the system choose are named apart. */
export function directSources(config: Pick<Config, 'POSTLANE_PROVIDERS'>): {
  sources: DirectSource[];
  unlisted: string[];
} {
  const direct = config.POSTLANE_PROVIDERS.flatMap((p) => (p.type === 'direct' ? [p] : []));
  return {
    sources: direct.flatMap((p) => sourceIdentities(p).map((identity) => ({ ...identity, regions: p.regions }))),
    unlisted: direct.filter((p) => !p.source_ips).map((p) => `direct (${p.regions.join(', ')})`),
  };
}

/** The name a PTR record of the address lives at (RFC 1035 §3.5, RFC 3596 §2.5). */
export function reverseName(ip: string): string {
  const bytes = ipaddr.parse(ip).toByteArray();
  if (bytes.length === 4) return `${bytes.reverse().join('.')}.in-addr.arpa`;
  const nibbles = bytes.flatMap((byte) => [byte >> 4, byte & 15].map((n) => n.toString(16)));
  return `${nibbles.reverse().join('.')}.ip6.arpa`;
}

const sameIp = (a: string, b: string) => {
  try {
    return ipaddr.parse(a).toNormalizedString() === ipaddr.parse(b).toNormalizedString();
  } catch {
    return false;
  }
};

/** The findings as one doctor line: the worst level, every finding not ok, the fix when one is needed. */
function summarize(findings: Finding[], fix: string): CheckResult {
  const level: Level = findings.some((f) => f.level === 'fail')
    ? 'fail'
    : findings.some((f) => f.level === 'warn')
      ? 'warn'
      : 'ok';
  const shown = level === 'ok' ? findings : findings.filter((f) => f.level !== 'ok');
  const detail = shown.map((f) => f.text).join('; ');
  return level === 'ok' ? { status: 'ok', detail } : { status: level, detail, fix };
}

/** A direct provider without source_ips: the system's address is used, and nothing here can name it. */
function withUnlisted(result: CheckResult, unlisted: string[]): CheckResult {
  if (unlisted.length === 0) return result;
  const note = `${unlisted.join(', ')} sends from an address the system picks, not checked`;
  if (result.status !== 'ok') return { ...result, detail: `${result.detail}; ${note}` };
  return {
    status: 'warn',
    detail: result.detail ? `${result.detail}; ${note}` : note,
    fix: 'List the addresses direct delivery sends from in source_ips, so they can be checked (and bound).',
  };
}

/**
 * Forward-confirmed reverse DNS of each source IP: its PTR names its EHLO name, and that name's
 * A or AAAA records include the IP. Mailbox providers refuse or junk mail from IPs without it.
 */
export async function checkReverseDns(dns: Dns, sources: DirectSource[], unlisted: string[]): Promise<CheckResult> {
  const findings = await Promise.all(
    sources.map(async ({ ip, ehloName }): Promise<Finding> => {
      const ptr = await dns.query(reverseName(ip), 'PTR');
      if (ptr.kind === 'unavailable')
        return { level: 'warn', text: `${ip}: the PTR query got no answer (${ptr.reason})` };
      if (ptr.kind === 'missing')
        return { level: 'fail', text: `${ip} has no PTR record (its EHLO name is ${ehloName})` };
      if (!ptr.values.includes(ehloName.toLowerCase()))
        return { level: 'fail', text: `${ip}: PTR names ${ptr.values.join(', ')}, not its EHLO name ${ehloName}` };
      const forward = await dns.query(ehloName, ipaddr.parse(ip).kind() === 'ipv6' ? 'AAAA' : 'A');
      if (forward.kind === 'unavailable')
        return { level: 'warn', text: `${ip}: ${ehloName} got no answer (${forward.reason})` };
      if (forward.kind === 'missing' || !forward.values.some((address) => sameIp(address, ip)))
        return {
          level: 'fail',
          text: `${ip}: PTR names ${ehloName}, but ${ehloName} resolves to ${forward.kind === 'found' ? forward.values.join(', ') : 'nothing'}, not back to ${ip}`,
        };
      return { level: 'ok', text: `${ip} ↔ ${ehloName}` };
    }),
  );
  return withUnlisted(
    summarize(
      findings,
      "Have each source IP's PTR record name its EHLO name (whoever owns the address sets it, often in the hosting provider's control panel), and publish that name's A (or AAAA) record pointing back to the IP.",
    ),
    unlisted,
  );
}

/**
 * SPF of each sending domain (and the bounce domain, where return paths live) authorizes each
 * source IP of the regions it sends from, as a receiver evaluates it (mailauth).
 */
export async function checkSpf(
  dns: Dns,
  sources: DirectSource[],
  domains: { name: string; region: string | null }[],
  unlisted: string[],
): Promise<CheckResult> {
  const pairs = sources.flatMap((source) =>
    domains
      .filter((d) => d.region === null || source.regions.includes(d.region))
      .map((d) => ({ source, domain: d.name })),
  );
  if (pairs.length === 0)
    return withUnlisted({ status: 'ok', detail: 'no verified sending domain in a direct region yet' }, unlisted);
  const resolver = ((name: string, type: string) => dns.resolve(name, type)) as DNSResolver;
  const findings = await Promise.all(
    pairs.map(async ({ source, domain }): Promise<Finding> => {
      const result = await spf({
        ip: source.ip,
        sender: `postmaster@${domain}`,
        helo: source.ehloName,
        mta: source.ehloName,
        resolver,
      });
      const verdict = result.status.result;
      if (verdict === 'pass') return { level: 'ok', text: `${domain} authorizes ${source.ip}` };
      if (verdict === 'temperror' || verdict === 'temperr')
        return { level: 'warn', text: `${domain}: SPF could not be evaluated for ${source.ip} (DNS did not answer)` };
      return { level: 'fail', text: `${domain} does not authorize ${source.ip} (SPF ${verdict})` };
    }),
  );
  return withUnlisted(
    summarize(
      findings,
      "Add the source IPs to each domain's SPF record (ip4:… or ip6:… before the final all); postlane domains check <name> shows the record Postlane expects.",
    ),
    unlisted,
  );
}

/** `host`, `host:port` or `[v6]:port`, port 25 when none is given. */
function parseTarget(target: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(target)!;
  return { host: match[1] ?? match[2]!, port: match[3] ? Number(match[3]) : PORT_25 };
}

/** A TCP connection from `localAddress` (the system's choice when unset): null when it opened, else why not. */
function probe(target: { host: string; port: number }, localAddress: string | undefined, timeoutMs: number) {
  return new Promise<string | null>((resolve) => {
    const socket = connect({ ...target, localAddress, timeout: timeoutMs });
    const done = (outcome: string | null) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.once('connect', () => done(null));
    socket.once('timeout', () => done(`no answer within ${timeoutMs / 1000} s`));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

/**
 * Port 25 outbound: a TCP connection from each source IP to a mail server that answers on it
 * (POSTLANE_PORT25_PROBE, else gmail.com's first MX, looked up now). Many clouds block it.
 */
export async function checkPort25(
  dns: Dns,
  sources: DirectSource[],
  probeTarget: string | undefined,
  timeoutMs: number,
): Promise<CheckResult> {
  let target: { host: string; port: number };
  if (probeTarget) target = parseTarget(probeTarget);
  else {
    const mx = await dns.query(PROBE_DOMAIN, 'MX');
    if (mx.kind !== 'found')
      return {
        status: 'warn',
        detail: `the MX of ${PROBE_DOMAIN} could not be read, so port 25 was not tried`,
        fix: 'Check DNS (POSTLANE_DNS_SERVERS), or set POSTLANE_PORT25_PROBE to a mail server to try.',
      };
    const [, host] = mx.values.map((value) => value.split(' ')).sort((a, b) => Number(a[0]) - Number(b[0]))[0]!;
    target = { host: host!, port: PORT_25 };
  }
  // Named by POSTLANE_DNS_SERVERS like every other name Postlane looks up, not by the system's resolver.
  if (isIP(target.host) === 0) {
    const family = sources.some((source) => isIP(source.ip) === 6) && !sources.some((s) => isIP(s.ip) === 4);
    const addresses = await dns.query(target.host, family ? 'AAAA' : 'A');
    if (addresses.kind === 'found') target = { ...target, host: addresses.values[0]! };
  }
  const from = sources.length > 0 ? sources.map((source) => source.ip) : [undefined];
  const findings = await Promise.all(
    from.map(async (ip): Promise<Finding> => {
      const failure = await probe(target, ip, timeoutMs);
      const origin = ip ?? "this host's address";
      return failure === null
        ? { level: 'ok', text: `${origin} reaches ${target.host}:${target.port}` }
        : { level: 'fail', text: `${origin} cannot reach ${target.host}:${target.port}: ${failure}` };
    }),
  );
  return summarize(
    findings,
    'Open outbound TCP port 25 from every worker host: many clouds block it until asked (their support or console), and a local firewall may too. Until then send through a relay (an smtp or ses provider).',
  );
}
