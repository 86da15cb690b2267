import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsResolver } from '../../../../server/dns/resolver.js';
import {
  MAX_ADDRESSES_PER_HOST,
  MAX_MX_HOSTS,
  type MxRoute,
  mxGroupKey,
  resolveRoute,
} from '../../../../server/providers/direct/mx-route.js';
import { startDnsServer } from '../../../support/dns-server.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let resolver: DnsResolver;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 });
});
afterAll(async () => {
  await dns.close();
});

/** The random source Fisher-Yates sees: 0 always swaps with the first, just under 1 never swaps. */
const swapFirst = () => 0;
const keepOrder = () => 0.999;

const hostNames = (route: MxRoute) => (route.kind === 'route' ? route.hosts.map((host) => host.name) : route);

describe('resolveRoute (RFC 5321 §5.1)', () => {
  it('lists MX hosts most preferred first, equal preferences in the order the random source makes, each with its A and AAAA addresses', async () => {
    dns.set('MX', 'order.route.test', [
      '10 mx2.order.route.test',
      '5 mx1.order.route.test',
      '10 mx3.order.route.test',
      '20 mx4.order.route.test.',
    ]);
    for (const n of [1, 2, 3, 4]) dns.set('A', `mx${n}.order.route.test`, [`192.0.2.${n}`]);
    dns.set('AAAA', 'mx1.order.route.test', ['2001:db8::1']);

    const kept = await resolveRoute(resolver, 'Order.Route.Test.', keepOrder);
    const swapped = await resolveRoute(resolver, 'order.route.test', swapFirst);
    expect(kept).toMatchObject({ kind: 'route', domain: 'order.route.test', implicit: false });
    if (kept.kind !== 'route') return;
    expect(kept.hosts[0]).toEqual({
      name: 'mx1.order.route.test',
      preference: 5,
      addresses: ['192.0.2.1', '2001:db8::1'],
    });
    expect(kept.hosts.map((host) => host.preference)).toEqual([5, 10, 10, 20]);
    const middle = (route: MxRoute) => (hostNames(route) as string[]).slice(1, 3);
    expect(middle(kept).sort()).toEqual(['mx2.order.route.test', 'mx3.order.route.test']);
    expect(middle(swapped).sort()).toEqual(['mx2.order.route.test', 'mx3.order.route.test']);
    expect(middle(swapped)).toEqual([...middle(kept)].reverse());
    expect((hostNames(swapped) as string[])[3]).toBe('mx4.order.route.test');
    // The same random source, the same order: what makes these tests repeatable.
    expect(hostNames(await resolveRoute(resolver, 'order.route.test', swapFirst))).toEqual(hostNames(swapped));
  });

  it('falls back to the domain’s own addresses when it has no MX record (the implicit MX)', async () => {
    dns.set('A', 'implicit.route.test', ['192.0.2.10']);
    dns.set('AAAA', 'implicit.route.test', ['2001:db8::10']);
    expect(await resolveRoute(resolver, 'implicit.route.test')).toEqual({
      kind: 'route',
      domain: 'implicit.route.test',
      implicit: true,
      hosts: [{ name: 'implicit.route.test', preference: 0, addresses: ['192.0.2.10', '2001:db8::10'] }],
    });
  });

  it('refuses a domain with a null MX (RFC 7505) at once, and ignores a null MX beside usable records', async () => {
    dns.set('MX', 'nullmx.route.test', ['0 .']);
    dns.set('A', 'nullmx.route.test', ['192.0.2.20']);
    expect(await resolveRoute(resolver, 'nullmx.route.test')).toMatchObject({ kind: 'refused', reason: 'null_mx' });

    dns.set('MX', 'mixed.route.test', ['0 .', '10 mx.mixed.route.test']);
    dns.set('A', 'mx.mixed.route.test', ['192.0.2.21']);
    expect(hostNames(await resolveRoute(resolver, 'mixed.route.test'))).toEqual(['mx.mixed.route.test']);
  });

  it('refuses a domain that does not exist, but reads a timeout or SERVFAIL as unavailable, never as missing', async () => {
    expect(await resolveRoute(resolver, 'nowhere.route.test')).toMatchObject({
      kind: 'refused',
      reason: 'no_mail_host',
    });

    dns.set('MX', 'slow.route.test', { fault: 'timeout' });
    expect(await resolveRoute(resolver, 'slow.route.test')).toMatchObject({
      kind: 'unavailable',
      reason: 'MX lookup: timeout',
    });
    dns.set('MX', 'broken.route.test', { fault: 'servfail' });
    expect(await resolveRoute(resolver, 'broken.route.test')).toMatchObject({ kind: 'unavailable' });

    // No MX, and the address lookup of the implicit MX fails: still temporary.
    dns.set('A', 'implicit-slow.route.test', { fault: 'timeout' });
    dns.set('AAAA', 'implicit-slow.route.test', []);
    expect(await resolveRoute(resolver, 'implicit-slow.route.test')).toMatchObject({ kind: 'unavailable' });

    // The MX host's addresses cannot be read: temporary; the host has none at all: permanent.
    dns.set('MX', 'mxhost-down.route.test', ['10 mx.mxhost-down.route.test']);
    dns.set('A', 'mx.mxhost-down.route.test', { fault: 'servfail' });
    expect(await resolveRoute(resolver, 'mxhost-down.route.test')).toMatchObject({ kind: 'unavailable' });
    dns.set('MX', 'mxhost-gone.route.test', ['10 mx.nowhere.route.test']);
    expect(await resolveRoute(resolver, 'mxhost-gone.route.test')).toMatchObject({
      kind: 'refused',
      reason: 'no_mail_host',
    });
  });

  it('keeps a host whose addresses are temporarily unreadable in the route (and its group) while another host has some', async () => {
    dns.set('MX', 'half.route.test', ['10 a.half.route.test', '20 b.half.route.test']);
    dns.set('A', 'a.half.route.test', { fault: 'servfail' });
    dns.set('A', 'b.half.route.test', ['192.0.2.30']);
    const route = await resolveRoute(resolver, 'half.route.test');
    expect(route).toMatchObject({
      kind: 'route',
      hosts: [
        { name: 'a.half.route.test', addresses: [] },
        { name: 'b.half.route.test', addresses: ['192.0.2.30'] },
      ],
    });
  });

  it(`considers at most ${MAX_MX_HOSTS} MX hosts (the most preferred) and ${MAX_ADDRESSES_PER_HOST} addresses per host`, async () => {
    const many = Array.from({ length: 25 }, (_, i) => i + 1);
    dns.set('MX', 'many.route.test', many.map((n) => `${n} mx${n}.many.route.test`).reverse());
    for (const n of many) dns.set('A', `mx${n}.many.route.test`, [`192.0.2.${n}`]);
    dns.set(
      'A',
      'mx1.many.route.test',
      many.map((n) => `198.51.100.${n}`),
    );
    dns.set('AAAA', 'mx1.many.route.test', ['2001:db8::1']);
    const route = await resolveRoute(resolver, 'many.route.test');
    expect(hostNames(route)).toEqual(many.slice(0, MAX_MX_HOSTS).map((n) => `mx${n}.many.route.test`));
    if (route.kind !== 'route') return;
    expect(route.hosts[0]!.addresses).toEqual(many.slice(0, MAX_ADDRESSES_PER_HOST).map((n) => `198.51.100.${n}`));
  });

  it('validates names: an invalid domain is refused without a lookup; IP literals and malformed MX names are skipped', async () => {
    for (const domain of ['', 'no_underscore.route.test', 'a..route.test', `${'x'.repeat(64)}.route.test`, '192.0.2.1'])
      expect(await resolveRoute(resolver, domain)).toMatchObject({ kind: 'refused', reason: 'invalid_domain' });

    dns.set('MX', 'names.route.test', ['10 192.0.2.40', '20 bad_name.route.test', '30 mx.names.route.test']);
    dns.set('A', 'mx.names.route.test', ['192.0.2.41']);
    expect(hostNames(await resolveRoute(resolver, 'names.route.test'))).toEqual(['mx.names.route.test']);

    dns.set('MX', 'only-bad.route.test', ['10 192.0.2.40']);
    expect(await resolveRoute(resolver, 'only-bad.route.test')).toMatchObject({
      kind: 'refused',
      reason: 'no_mail_host',
    });
  });
});

describe('mxGroupKey', () => {
  it('gives every domain served by the same MX hosts one group, with the hosts’ registrable domains for profile matching', async () => {
    const google = ['aspmx.l.google.com', 'alt1.aspmx.l.google.com', 'alt2.aspmx.l.google.com'];
    dns.set('MX', 'one.group.test', [`1 ${google[0]}`, `5 ${google[1]}`, `5 ${google[2]}`]);
    dns.set('MX', 'two.group.test', [`10 ${google[2]}`, `10 ${google[1]}`, `5 ${google[0]}`, `20 ${google[0]}`]);
    for (const [n, host] of google.entries()) dns.set('A', host, [`192.0.2.${50 + n}`]);
    dns.set('MX', 'uk.group.test', ['10 mx1.example.co.uk', '20 mx2.example.co.uk', '30 mx.other.test']);
    for (const host of ['mx1.example.co.uk', 'mx2.example.co.uk', 'mx.other.test']) dns.set('A', host, ['192.0.2.60']);

    const group = async (domain: string) => {
      const route = await resolveRoute(resolver, domain, swapFirst);
      if (route.kind !== 'route') throw new Error(`no route to ${domain}`);
      return mxGroupKey(route);
    };
    const one = await group('one.group.test');
    expect(one).toEqual({
      key: 'alt1.aspmx.l.google.com,alt2.aspmx.l.google.com,aspmx.l.google.com',
      hosts: ['alt1.aspmx.l.google.com', 'alt2.aspmx.l.google.com', 'aspmx.l.google.com'],
      registrableDomains: ['google.com'],
    });
    expect(await group('two.group.test')).toEqual(one);
    expect((await group('uk.group.test')).registrableDomains).toEqual(['example.co.uk', 'other.test']);
  });
});
