import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { getDomain } from 'tldts';
import type { DnsAnswer, DnsResolver } from '../../dns/resolver.js';

/**
 * Bounds on what one domain's DNS can make a delivery consider: a zone is written by whoever owns
 * the recipient domain, and a hundred MX records of a hundred addresses each must not become ten
 * thousand connection attempts (or lookups).
 */
export const MAX_MX_HOSTS = 10;
export const MAX_ADDRESSES_PER_HOST = 10;

export interface MxHost {
  name: string;
  preference: number;
  /** A records first, then AAAA, at most MAX_ADDRESSES_PER_HOST; empty when the host has none or could not be resolved. */
  addresses: string[];
}

export type MxRoute =
  /** Hosts in the order to try them; `implicit` when the domain has no MX and its own address stands in (RFC 5321 §5.1). */
  | { kind: 'route'; domain: string; implicit: boolean; hosts: MxHost[] }
  /** Mail to this domain cannot be delivered, now or later: fail it at once. */
  | { kind: 'refused'; domain: string; reason: RouteRefusal; message: string }
  /** DNS could not answer (timeout, SERVFAIL): try again later, never treat as "no such domain". */
  | { kind: 'unavailable'; domain: string; reason: string };

export type RouteRefusal = 'invalid_domain' | 'null_mx' | 'no_mail_host';

/** A host name as SMTP needs it: letters, digits and hyphens in labels of 1-63, 253 at most, not an IP literal. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The name in lower-case A-labels without the root dot, or null when it is no usable host name. */
export function normalizeHostName(name: string): string | null {
  const ascii = domainToASCII(name.trim().replace(/\.$/, '')).toLowerCase();
  return HOST_NAME.test(ascii) && isIP(ascii) === 0 && !/^[0-9.]+$/.test(ascii) ? ascii : null;
}

/**
 * Where mail for `domain` goes (RFC 5321 §5.1): its MX hosts, most preferred first, hosts of equal
 * preference in a random order (`random`, injected so tests are deterministic) so load spreads as
 * the domain's owner meant; each with its A and AAAA addresses. No MX record: the domain's own
 * addresses (the implicit MX). A null MX (RFC 7505: `0 .`): refused at once.
 */
export async function resolveRoute(
  resolver: Pick<DnsResolver, 'query'>,
  domain: string,
  random: () => number = Math.random,
): Promise<MxRoute> {
  const name = normalizeHostName(domain);
  if (!name)
    return { kind: 'refused', domain, reason: 'invalid_domain', message: `${domain} is not a valid domain name` };
  const mx = await resolver.query(name, 'MX');
  if (mx.kind === 'unavailable') return { kind: 'unavailable', domain: name, reason: `MX lookup: ${mx.reason}` };
  if (mx.kind === 'missing') return implicitRoute(resolver, name);

  const records = mx.values.map(parseMx);
  const hosts = orderByPreference(
    records.filter((record): record is { preference: number; exchange: string } => record?.exchange != null),
    random,
  ).slice(0, MAX_MX_HOSTS);
  if (hosts.length === 0) {
    // RFC 7505 §3: a null MX is the domain's only MX record; one beside usable records is ignored.
    const isNullMx = records.some((record) => record?.exchange === null);
    return isNullMx
      ? { kind: 'refused', domain: name, reason: 'null_mx', message: `${name} accepts no mail (null MX)` }
      : { kind: 'refused', domain: name, reason: 'no_mail_host', message: `${name} has no valid MX host name` };
  }
  const resolved = await Promise.all(hosts.map((host) => hostAddresses(resolver, host.exchange)));
  const route: MxHost[] = hosts.map((host, i) => ({
    name: host.exchange,
    preference: host.preference,
    addresses: resolved[i]!.addresses,
  }));
  if (route.some((host) => host.addresses.length > 0))
    return { kind: 'route', domain: name, implicit: false, hosts: route };
  const failure = resolved.find((host) => host.unavailable)?.unavailable;
  if (failure) return { kind: 'unavailable', domain: name, reason: failure };
  return { kind: 'refused', domain: name, reason: 'no_mail_host', message: `no MX host of ${name} has an address` };
}

/** No MX record: the domain itself is the mail host, if it has an address (RFC 5321 §5.1). */
async function implicitRoute(resolver: Pick<DnsResolver, 'query'>, domain: string): Promise<MxRoute> {
  const { addresses, unavailable } = await hostAddresses(resolver, domain);
  if (addresses.length > 0)
    return { kind: 'route', domain, implicit: true, hosts: [{ name: domain, preference: 0, addresses }] };
  if (unavailable) return { kind: 'unavailable', domain, reason: unavailable };
  // NXDOMAIN lands here too: a name that does not exist has neither MX nor address.
  return {
    kind: 'refused',
    domain,
    reason: 'no_mail_host',
    message: `${domain} does not exist or has no MX record and no address`,
  };
}

/** `exchange` is null for the root (`.`), the null MX; the record is null when it is unreadable or names no valid host. */
type MxRecord = { preference: number; exchange: string | null };

/** DnsResolver's MX values read `<preference> <exchange>`, the root as an empty exchange. */
function parseMx(value: string): MxRecord | null {
  const [preference, exchange = ''] = value.split(' ');
  const number = Number(preference);
  if (!Number.isInteger(number) || number < 0 || number > 65_535) return null;
  if (exchange === '' || exchange === '.') return { preference: number, exchange: null };
  const host = normalizeHostName(exchange);
  return host ? { preference: number, exchange: host } : null;
}

/** Most preferred first; equal preferences shuffled (Fisher-Yates); a host named twice keeps its best place. */
function orderByPreference(records: { preference: number; exchange: string }[], random: () => number) {
  const shuffled = [...records];
  for (let i = shuffled.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  // Array.prototype.sort is stable: the shuffle stays within each preference.
  const ordered = shuffled.sort((a, b) => a.preference - b.preference);
  const seen = new Set<string>();
  return ordered.filter((record) => !seen.has(record.exchange) && seen.add(record.exchange));
}

/**
 * A host's addresses (A first, then AAAA, at most MAX_ADDRESSES_PER_HOST), and why they are
 * missing when a lookup could not answer (rather than "none").
 */
export async function hostAddresses(resolver: Pick<DnsResolver, 'query'>, host: string) {
  const answers = await Promise.all([resolver.query(host, 'A'), resolver.query(host, 'AAAA')]);
  const found = (answer: DnsAnswer) => (answer.kind === 'found' ? answer.values.filter((value) => isIP(value)) : []);
  const addresses = [...new Set(answers.flatMap(found))].slice(0, MAX_ADDRESSES_PER_HOST);
  const failed = answers.find((answer) => answer.kind === 'unavailable');
  return { addresses, unavailable: failed ? `address lookup of ${host}: ${failed.reason}` : undefined };
}

export interface MxGroup {
  /** The sorted, de-duplicated MX host names: every domain served by the same hosts shares one group. */
  key: string;
  hosts: string[];
  /**
   * The hosts' registrable domains (public suffix list), sorted and de-duplicated: `google.com` for
   * `aspmx.l.google.com`, what a shaping profile such as `*.google.com` is matched against.
   */
  registrableDomains: string[];
}

/** The destination group of a route: the set of hosts, so one Google Workspace domain's limits are every one's. */
export function mxGroupKey(route: Extract<MxRoute, { kind: 'route' }>): MxGroup {
  const hosts = [...new Set(route.hosts.map((host) => host.name))].sort();
  const registrableDomains = [...new Set(hosts.map((host) => getDomain(host) ?? host))].sort();
  return { key: hosts.join(','), hosts, registrableDomains };
}
