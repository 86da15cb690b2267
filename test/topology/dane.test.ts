import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnssecResolver } from '../../server/dns/dnssec-resolver.js';
import { DnsResolver } from '../../server/dns/resolver.js';
import { createBounceClassifier } from '../../server/mail/bounce-classifier.js';
import { daneLookup } from '../../server/providers/direct/dane.js';
import { DirectProvider } from '../../server/providers/direct/direct.provider.js';
import { selfSignedCertificate } from '../support/certificate.js';
import { tlsaFor, tlsaText } from '../support/dane.js';
import { message, type Mx, startOnOnePort } from '../support/mx-sinks.js';
import { RecordingShaper } from '../support/recording-shaper.js';
import { startValidatingResolver, type ValidatingResolver } from '../support/validating-resolver.js';

/**
 * DANE through a real validating resolver: Unbound on loopback, trusting the key that signed the
 * test's zone (NSD serves it), so the AD bit the provider relies on is Unbound's own verdict, and a
 * TLSA record without a valid signature gets SERVFAIL from it.
 */
const good = selfSignedCertificate('mx.good.dane.test');
const other = selfSignedCertificate('someone-else.test');
const named = tlsaText(tlsaFor(good.cert, 3, 1, 1));
let resolver: ValidatingResolver;
let sinks: Record<'good' | 'wrong' | 'bogus' | 'nodane' | 'open', Mx>;

beforeAll(async () => {
  resolver = await startValidatingResolver([
    {
      name: 'dane.test',
      signed: true,
      records: [
        ...['good', 'wrong', 'bogus', 'nodane'].flatMap((host, i) => [
          `${host} IN MX 10 mx.${host}.dane.test.`,
          `mx.${host} IN A 127.0.0.${21 + i}`,
        ]),
        `_25._tcp.mx.good IN TLSA ${named}`,
        `_25._tcp.mx.wrong IN TLSA ${named}`,
      ],
      // Published after signing: no signature covers it, so Unbound finds it bogus.
      bogus: [`_25._tcp.mx.bogus.dane.test. 300 IN TLSA ${named}`],
    },
    {
      name: 'plain.test',
      signed: false,
      // A TLSA record no server here matches: unsigned, it must be ignored.
      records: [
        'open IN MX 10 mx.open.plain.test.',
        'mx.open IN A 127.0.0.25',
        `_25._tcp.mx.open IN TLSA ${tlsaText(tlsaFor(other.cert, 3, 1, 1))}`,
      ],
    },
  ]);
  sinks = await startOnOnePort({
    good: ['127.0.0.21', { tls: good }],
    wrong: ['127.0.0.22', { tls: other }],
    bogus: ['127.0.0.23', { tls: good }],
    nodane: ['127.0.0.24', {}],
    open: ['127.0.0.25', { tls: good }],
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(sinks ?? {}).map((sink) => sink.close()));
  await resolver?.stop();
  rmSync(good.dir, { recursive: true, force: true });
  rmSync(other.dir, { recursive: true, force: true });
});

function provider() {
  const servers = { POSTLANE_DNS_SERVERS: [resolver.address], POSTLANE_DNS_TIMEOUT_MS: 3_000 };
  return new DirectProvider(
    {
      type: 'direct',
      regions: ['direct'],
      ehlo_name: 'out.postlane.test',
      source_ips: ['127.0.0.1'],
      rate_per_second: 100,
    },
    {
      dns: new DnsResolver(servers),
      dane: daneLookup(new DnssecResolver(servers)),
      shaper: new RecordingShaper(),
      classifyReply: createBounceClassifier(),
      stsPolicy: async () => ({ kind: 'none', reason: 'no MTA-STS record' }),
      shapingProfile: () => 'default',
      random: () => 0,
    },
    { timeoutMs: 5_000, dkimSelector: 'postlane', port: sinks.good.port },
  );
}

describe('DANE with Unbound validating a signed zone', () => {
  it('sees the signed zone as secure and the unsigned one as not, through the AD bit', async () => {
    const dnssec = new DnssecResolver({ POSTLANE_DNS_SERVERS: [resolver.address], POSTLANE_DNS_TIMEOUT_MS: 3_000 });

    expect(await dnssec.query('good.dane.test', 'MX')).toMatchObject({ kind: 'found', secure: true });
    expect(await dnssec.query('_25._tcp.mx.nodane.dane.test', 'TLSA')).toEqual({ kind: 'missing', secure: true });
    expect(await dnssec.query('open.plain.test', 'MX')).toMatchObject({ kind: 'found', secure: false });
    expect(await dnssec.query('_25._tcp.mx.bogus.dane.test', 'TLSA')).toEqual({
      kind: 'unavailable',
      reason: 'SERVFAIL',
    });
  });

  it('delivers over STARTTLS to the server whose certificate the signed TLSA record names', async () => {
    const direct = provider();
    const result = await direct.send(message(['ada@good.dane.test']), AbortSignal.timeout(15_000));
    await direct.close();

    expect(result.recipients[0]).toMatchObject({ accepted: true });
    expect(sinks.good.received.at(-1)).toMatchObject({ to: ['ada@good.dane.test'], secure: true });
  });

  it('defers (tls_failure) a server whose certificate the record does not name, and (bogus TLSA) one it cannot trust', async () => {
    const direct = provider();
    const wrong = await direct.send(message(['bob@wrong.dane.test']), AbortSignal.timeout(15_000));
    const bogus = await direct.send(message(['cyd@bogus.dane.test']), AbortSignal.timeout(15_000));
    await direct.close();

    expect(wrong.recipients[0]).toMatchObject({ accepted: false, transient: true, class: 'tls_failure' });
    expect(sinks.wrong.received).toHaveLength(0);
    expect(bogus.recipients[0]).toMatchObject({
      accepted: false,
      transient: true,
      class: 'dns_failure',
      response: 'mx.bogus.dane.test: TLSA lookup of _25._tcp.mx.bogus.dane.test: SERVFAIL',
    });
    expect(sinks.bogus.connections()).toBe(0);
  });

  it('goes on as before where DANE does not apply: no TLSA record in a signed zone, or an unsigned zone', async () => {
    const direct = provider();
    const nodane = await direct.send(message(['dee@nodane.dane.test']), AbortSignal.timeout(15_000));
    const open = await direct.send(message(['eve@open.plain.test']), AbortSignal.timeout(15_000));
    await direct.close();

    expect(nodane.recipients[0]).toMatchObject({ accepted: true });
    expect(sinks.nodane.received.at(-1)).toMatchObject({ to: ['dee@nodane.dane.test'], secure: false });
    expect(open.recipients[0]).toMatchObject({ accepted: true });
    expect(sinks.open.received.at(-1)).toMatchObject({ to: ['eve@open.plain.test'], secure: true });
  });
});
