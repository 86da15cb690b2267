import ipaddr from 'ipaddr.js';
import type { Middleware } from 'koa';

const FORWARDED = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];

/**
 * Under POSTLANE_TRUST_PROXY, Koa believes `X-Forwarded-*`; this drops those headers from any
 * connection that does not come from one of the configured proxies, so a client reaching the API
 * directly cannot claim another address, scheme or host.
 */
export function trustedProxies(cidrs: readonly string[]): Middleware {
  const ranges = cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  const trusted = (address: string | undefined) => {
    if (!address || !ipaddr.isValid(address)) return false;
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
      parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    return ranges.some((range) => range[0].kind() === parsed.kind() && parsed.match(range));
  };
  return async function trustedProxies(ctx, next) {
    if (!trusted(ctx.req.socket.remoteAddress)) for (const header of FORWARDED) delete ctx.req.headers[header];
    await next();
  };
}
