import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsQueryCache } from '../../../server/dns/answer-cache.js';
import { DnsResolver } from '../../../server/dns/resolver.js';
import { startDnsServer } from '../../support/dns-server.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let now = 0;

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns.close();
});

describe('DnsQueryCache (direct delivery’s MX, address and MTA-STS look-ups)', () => {
  const queries = () =>
    new DnsQueryCache(
      new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 }),
      () => now,
    );

  it('answers from memory for a minute, "missing" included, then asks again', async () => {
    const answers = queries();
    dns.set('MX', 'route.cache.test', ['10 mx1.route.cache.test']);
    expect(await answers.query('route.cache.test', 'MX')).toEqual({
      kind: 'found',
      values: ['10 mx1.route.cache.test'],
    });
    expect(await answers.query('mx1.route.cache.test', 'A')).toEqual({ kind: 'missing' });
    dns.set('MX', 'route.cache.test', ['10 mx2.route.cache.test']);
    dns.set('A', 'mx1.route.cache.test', ['192.0.2.1']);
    now += 59_000;
    expect(await answers.query('Route.cache.test', 'MX')).toEqual({
      kind: 'found',
      values: ['10 mx1.route.cache.test'],
    });
    expect(await answers.query('mx1.route.cache.test', 'A')).toEqual({ kind: 'missing' });
    now += 1_000;
    expect(await answers.query('route.cache.test', 'MX')).toEqual({
      kind: 'found',
      values: ['10 mx2.route.cache.test'],
    });
    expect(await answers.query('mx1.route.cache.test', 'A')).toEqual({ kind: 'found', values: ['192.0.2.1'] });
  });

  it('keeps a failure to ask for five seconds only', async () => {
    const answers = queries();
    dns.set('MX', 'flaky.route.cache.test', { fault: 'servfail' });
    expect(await answers.query('flaky.route.cache.test', 'MX')).toMatchObject({ kind: 'unavailable' });
    dns.set('MX', 'flaky.route.cache.test', ['10 mx.flaky.route.cache.test']);
    now += 4_999;
    expect(await answers.query('flaky.route.cache.test', 'MX')).toMatchObject({ kind: 'unavailable' });
    now += 1;
    expect(await answers.query('flaky.route.cache.test', 'MX')).toEqual({
      kind: 'found',
      values: ['10 mx.flaky.route.cache.test'],
    });
  });
});
