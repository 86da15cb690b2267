import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsAnswerCache, DnsQueryCache } from '../../../server/dns/answer-cache.js';
import { DnsResolver } from '../../../server/dns/resolver.js';
import { startDnsServer } from '../../support/dns-server.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let now = 0;
const cache = () =>
  new DnsAnswerCache(
    new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 }),
    () => now,
    60_000,
  );
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

describe('DnsAnswerCache (the mail workers’ SPF, DKIM and DMARC look-ups)', () => {
  it('answers from memory until the answer is a minute old, then asks again', async () => {
    const answers = cache();
    dns.set('TXT', 'spf.cache.test', ['v=spf1 ip4:192.0.2.1 -all']);
    expect(await answers.resolve('spf.cache.test', 'TXT')).toEqual([['v=spf1 ip4:192.0.2.1 -all']]);
    dns.set('TXT', 'spf.cache.test', ['v=spf1 -all']);
    now += 59_000;
    expect(await answers.resolve('SPF.cache.test', 'TXT')).toEqual([['v=spf1 ip4:192.0.2.1 -all']]);
    now += 1_000;
    expect(await answers.resolve('spf.cache.test', 'TXT')).toEqual([['v=spf1 -all']]);
  });

  it('keeps "no such name" as an answer, but asks again after a failure to ask', async () => {
    const answers = cache();
    expect(await code(answers.resolve('_dmarc.missing.cache.test', 'TXT'))).toBe('ENOTFOUND');
    dns.set('TXT', '_dmarc.missing.cache.test', ['v=DMARC1; p=none']);
    expect(await code(answers.resolve('_dmarc.missing.cache.test', 'TXT'))).toBe('ENOTFOUND');

    dns.set('TXT', 'flaky.cache.test', { fault: 'servfail' });
    expect(await code(answers.resolve('flaky.cache.test', 'TXT'))).not.toBe('answered');
    dns.set('TXT', 'flaky.cache.test', ['v=spf1 -all']);
    expect(await answers.resolve('flaky.cache.test', 'TXT')).toEqual([['v=spf1 -all']]);
  });

  it('hands each caller its own copy', async () => {
    const answers = cache();
    dns.set('TXT', 'copy.cache.test', ['v=DKIM1; p=abc']);
    const first = (await answers.resolve('copy.cache.test', 'TXT')) as string[][];
    first[0]!.push('changed by a caller');
    expect(await answers.resolve('copy.cache.test', 'TXT')).toEqual([['v=DKIM1; p=abc']]);
  });
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
