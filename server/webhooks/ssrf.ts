import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { Config } from '../../config/index.js';

type SsrfConfig = Pick<Config, 'POSTLANE_WEBHOOK_ALLOWED_CIDRS' | 'POSTLANE_WEBHOOK_ALLOWED_HOSTS'>;

/**
 * Only ordinary public unicast addresses are reachable: loopback, private, link-local (cloud
 * metadata), CGNAT, reserved, documentation, multicast and IPv4-mapped forms are not, unless one
 * of `allowedCidrs` covers them. The same rule request-filtering-agent applies at connect time.
 */
export function isAddressAllowed(address: string, allowedCidrs: readonly string[]): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const allowed = allowedCidrs.some((cidr) => {
    const range = ipaddr.parseCIDR(cidr);
    return range[0].kind() === parsed.kind() && parsed.match(range);
  });
  return allowed || parsed.range() === 'unicast';
}

/**
 * The create-time courtesy check (an early 422): scheme, no credentials, and every address the
 * name resolves to now. DNS can change later, so the connect-time agent is the authority.
 * Returns the problem, or null.
 */
export async function checkEndpointUrl(endpoint: string, config: SsrfConfig): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not contain credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (config.POSTLANE_WEBHOOK_ALLOWED_HOSTS.includes(host)) return null;
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `host ${host} does not resolve`;
  }
  const blocked = addresses.find((address) => !isAddressAllowed(address, config.POSTLANE_WEBHOOK_ALLOWED_CIDRS));
  if (!blocked) return null;
  const range = ipaddr.parse(blocked).kind() === 'ipv6' ? `${blocked}/128` : `${blocked}/32`;
  return (
    `must not point to a private, loopback or internal address (${host} is ${blocked}); ` +
    `to deliver there, add ${range} to POSTLANE_WEBHOOK_ALLOWED_CIDRS` +
    (ipaddr.isValid(host) ? '' : ` or ${host} to POSTLANE_WEBHOOK_ALLOWED_HOSTS`)
  );
}

/**
 * HTTP agents for deliveries: keep-alive, and (outside the host allowlist) filtered at connect
 * time, after DNS resolution, which also defeats DNS rebinding. Redirects are never followed
 * because node:http does not follow them.
 */
export class DeliveryAgents {
  private readonly filtered: { http: http.Agent; https: https.Agent };
  private readonly trusted: { http: http.Agent; https: https.Agent };

  constructor(private readonly config: SsrfConfig) {
    const filter = {
      allowIPAddressList: config.POSTLANE_WEBHOOK_ALLOWED_CIDRS,
      allowPrivateIPAddress: false,
      allowMetaIPAddress: false,
    };
    const pool = { keepAlive: true, maxFreeSockets: 64, scheduling: 'lifo' as const };
    this.filtered = {
      http: new RequestFilteringHttpAgent({ ...pool, ...filter }),
      https: new RequestFilteringHttpsAgent({ ...pool, ...filter }),
    };
    this.trusted = { http: new http.Agent(pool), https: new https.Agent(pool) };
  }

  for(url: URL): http.Agent {
    const set = this.config.POSTLANE_WEBHOOK_ALLOWED_HOSTS.includes(url.hostname.toLowerCase())
      ? this.trusted
      : this.filtered;
    return url.protocol === 'https:' ? set.https : set.http;
  }

  destroy(): void {
    for (const agent of [this.filtered.http, this.filtered.https, this.trusted.http, this.trusted.https])
      agent.destroy();
  }
}
