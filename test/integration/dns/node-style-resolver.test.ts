import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnssecResolver } from '../../../server/dns/dnssec-resolver.js';
import { nodeStyleResolver } from '../../../server/dns/node-style-resolver.js';
import { startDnsServer } from '../../support/dns-server.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let now = 0;
const resolver = () => {
  const dnssec = new DnssecResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 }, () => now);
  const { resolve } = nodeStyleResolver(dnssec);
  return resolve;
};
const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'answered',
    (err: NodeJS.ErrnoException) => err.code,
  );

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns.close();
});

describe('nodeStyleResolver (the mail workers’ SPF, DKIM and DMARC look-ups)', () => {
  it('answers in the shapes of node’s resolve(): TXT strings per record, MX exchange and priority, addresses, names', async () => {
    const resolve = resolver();
    const key = `v=DKIM1; k=rsa; p=${'A'.repeat(400)}`;
    dns.set('TXT', 'sel._domainkey.shapes.test', [key]);
    dns.set('MX', 'shapes.test', ['10 mx1.shapes.test', '20 mx2.shapes.test']);
    dns.set('A', 'shapes.test', ['192.0.2.1']);
    dns.set('AAAA', 'shapes.test', ['2001:db8::1']);
    dns.set('PTR', '1.2.0.192.in-addr.arpa', ['mail.shapes.test']);

    // A long TXT value arrives in its 255-byte strings, kept apart as node keeps them; mailauth joins them.
    const [txt] = (await resolve('sel._domainkey.shapes.test', 'TXT')) as string[][];
    expect(txt!.length).toBe(2);
    expect(txt!.join('')).toBe(key);
    expect(await resolve('shapes.test', 'MX')).toEqual([
      { exchange: 'mx1.shapes.test', priority: 10 },
      { exchange: 'mx2.shapes.test', priority: 20 },
    ]);
    expect(await resolve('shapes.test', 'A')).toEqual(['192.0.2.1']);
    expect(await resolve('shapes.test', 'AAAA')).toEqual(['2001:db8::1']);
    expect(await resolve('1.2.0.192.in-addr.arpa', 'PTR')).toEqual(['mail.shapes.test']);
  });

  it('raises ENOTFOUND for no such name or record, ESERVFAIL and ETIMEOUT when no answer can be had', async () => {
    const resolve = resolver();
    dns.set('TXT', 'exists.codes.test', ['v=spf1 -all']);
    dns.set('TXT', 'fail.codes.test', { fault: 'servfail' });
    dns.set('TXT', 'quiet.codes.test', { fault: 'timeout' });
    expect(await code(resolve('_dmarc.nowhere.codes.test', 'TXT'))).toBe('ENOTFOUND');
    expect(await code(resolve('exists.codes.test', 'MX'))).toBe('ENOTFOUND');
    expect(await code(resolve('fail.codes.test', 'TXT'))).toBe('ESERVFAIL');
    expect(await code(resolve('quiet.codes.test', 'TXT'))).toBe('ETIMEOUT');
    expect(await code(resolve('exists.codes.test', 'SRV'))).toBe('ENOTIMP');
  });

  it('keeps each answer for the TTL its publisher gave it: a 5 s record is asked again after 5 s, a 600 s one is not after 300 s', async () => {
    const resolve = resolver();
    dns.set('TXT', 'short.ttl.test', ['v=spf1 ip4:192.0.2.1 -all'], 5);
    dns.set('TXT', 'long.ttl.test', ['v=DMARC1; p=none'], 600);
    await resolve('short.ttl.test', 'TXT');
    await resolve('long.ttl.test', 'TXT');
    dns.set('TXT', 'short.ttl.test', ['v=spf1 -all'], 5);
    dns.set('TXT', 'long.ttl.test', ['v=DMARC1; p=reject'], 600);

    now += 4_000;
    expect(await resolve('SHORT.ttl.test', 'TXT')).toEqual([['v=spf1 ip4:192.0.2.1 -all']]);
    now += 2_000;
    expect(await resolve('short.ttl.test', 'TXT')).toEqual([['v=spf1 -all']]);
    now += 294_000;
    expect(await resolve('long.ttl.test', 'TXT')).toEqual([['v=DMARC1; p=none']]);
    now += 301_000;
    expect(await resolve('long.ttl.test', 'TXT')).toEqual([['v=DMARC1; p=reject']]);
  });

  it('hands each caller its own arrays: what one check changes, the next does not see', async () => {
    const resolve = resolver();
    dns.set('TXT', 'copy.ttl.test', ['v=DKIM1; p=abc']);
    const first = (await resolve('copy.ttl.test', 'TXT')) as string[][];
    first[0]!.push('changed by a caller');
    first.push(['another']);
    expect(await resolve('copy.ttl.test', 'TXT')).toEqual([['v=DKIM1; p=abc']]);
  });
});
