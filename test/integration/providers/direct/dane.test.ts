import { X509Certificate } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { daneLookup, matchTlsa, type TlsaRecord, usableTlsa } from '../../../../server/providers/direct/dane.js';
import type { MxRoute } from '../../../../server/providers/direct/mx-route.js';
import { selfSignedCertificate, testCertificateAuthority } from '../../../support/certificate.js';
import { stubSecureResolver, tlsaFor } from '../../../support/dane.js';

// Certificates made by openssl for the test: hence the integration project, though nothing here listens.
const server = selfSignedCertificate('not-the-mx-name.test');
const other = selfSignedCertificate('other.test');
const authority = testCertificateAuthority();
const otherAuthority = testCertificateAuthority();
const issued = authority.issue(['mx.dane.test']);
const wildcard = authority.issue(['*.dane.test']);
const strangers = otherAuthority.issue(['mx.dane.test']);

const x509 = (pem: string) => new X509Certificate(pem);
const now = new Date();
/** Long after every test certificate's two days: only DANE-EE ignores that. */
const later = new Date(now.getTime() + 400 * 86_400_000);

afterAll(() => {
  for (const dir of [server.dir, other.dir, authority.dir, otherAuthority.dir])
    rmSync(dir, { recursive: true, force: true });
});

describe('usable TLSA records (RFC 7672 §3.1.3)', () => {
  it('keeps DANE-TA and DANE-EE with selector 0/1 and matching 0/1/2 of the right length, drops the rest', () => {
    const good = tlsaFor(server.cert, 3, 1, 1);
    const records: TlsaRecord[] = [
      good,
      tlsaFor(authority.cert, 2, 0, 2),
      tlsaFor(server.cert, 3, 0, 0),
      { ...good, usage: 1 },
      { ...good, usage: 0 },
      { ...good, selector: 2 },
      { ...good, matchingType: 3 },
      { ...good, data: good.data.subarray(0, 31) },
      { ...good, matchingType: 2 },
      { ...good, matchingType: 0, data: Buffer.alloc(0) },
    ];

    expect(usableTlsa(records)).toEqual(records.slice(0, 3));
  });
});

describe('matching a server certificate against TLSA records', () => {
  it.each([
    [3, 1, 1],
    [3, 1, 2],
    [3, 1, 0],
    [3, 0, 1],
    [3, 0, 2],
    [3, 0, 0],
  ])(
    'DANE-EE %i %i %i matches the server’s own certificate, whatever its name and dates',
    (usage, selector, matching) => {
      const records = [tlsaFor(server.cert, usage, selector, matching)];

      expect(matchTlsa([x509(server.cert)], records, 'mx.dane.test', now)).toEqual({ ok: true, usage: 'DANE-EE' });
      expect(matchTlsa([x509(server.cert)], records, 'mx.dane.test', later)).toEqual({ ok: true, usage: 'DANE-EE' });
    },
  );

  it('refuses a certificate no record names', () => {
    const records = [tlsaFor(other.cert, 3, 1, 1), tlsaFor(other.cert, 3, 0, 1)];

    expect(matchTlsa([x509(server.cert)], records, 'mx.dane.test', now)).toEqual({
      ok: false,
      reason: 'no TLSA record matches the certificate',
    });
    expect(matchTlsa([], records, 'mx.dane.test', now)).toMatchObject({ ok: false });
  });

  it.each([
    [2, 0, 1],
    [2, 1, 1],
    [2, 0, 2],
  ])('DANE-TA %i %i %i: the chain up to the named authority, and the MX host name', (usage, selector, matching) => {
    const records = [tlsaFor(authority.cert, usage, selector, matching)];
    const chain = [x509(issued.cert), x509(authority.cert)];

    expect(matchTlsa(chain, records, 'mx.dane.test', now)).toEqual({ ok: true, usage: 'DANE-TA' });
    expect(matchTlsa(chain, records, 'mx2.dane.test', now)).toEqual({
      ok: false,
      reason: 'the certificate is not valid for mx2.dane.test (DANE-TA)',
    });
    expect(matchTlsa(chain, records, 'mx.dane.test', later)).toEqual({
      ok: false,
      reason: 'a certificate below the DANE-TA trust anchor is expired or not yet valid',
    });
  });

  it('DANE-TA: a wildcard covers one whole left-most label only', () => {
    const records = [tlsaFor(authority.cert, 2, 1, 1)];
    const chain = [x509(wildcard.cert), x509(authority.cert)];

    expect(matchTlsa(chain, records, 'mx.dane.test', now)).toMatchObject({ ok: true });
    expect(matchTlsa(chain, records, 'a.mx.dane.test', now)).toMatchObject({ ok: false });
  });

  it('DANE-TA: refuses a chain the named authority did not sign, and one without the authority', () => {
    const records = [tlsaFor(authority.cert, 2, 0, 1)];

    expect(matchTlsa([x509(strangers.cert), x509(authority.cert)], records, 'mx.dane.test', now)).toEqual({
      ok: false,
      reason: 'the certificate chain up to the DANE-TA trust anchor does not verify',
    });
    expect(matchTlsa([x509(issued.cert)], records, 'mx.dane.test', now)).toMatchObject({ ok: false });
    // A DANE-TA record does not name the server's own certificate.
    expect(
      matchTlsa([x509(issued.cert), x509(authority.cert)], [tlsaFor(issued.cert, 2, 0, 1)], 'mx.dane.test', now),
    ).toMatchObject({ ok: false });
  });
});

describe('DANE lookups for a route (with a stub resolver answering AD, not a validating one)', () => {
  const route: Extract<MxRoute, { kind: 'route' }> = {
    kind: 'route',
    domain: 'dane.test',
    implicit: false,
    hosts: [
      { name: 'mx1.dane.test', preference: 10, addresses: ['127.0.0.1'] },
      { name: 'mx2.dane.test', preference: 20, addresses: ['127.0.0.1'] },
      { name: 'mx3.dane.test', preference: 30, addresses: ['127.0.0.1'] },
      { name: 'mx4.dane.test', preference: 40, addresses: ['127.0.0.1'] },
    ],
  };
  const record = tlsaFor(server.cert, 3, 1, 1);

  it('finds usable records, none, unusable only (TLS without authentication) and a failed lookup, host by host', async () => {
    const asked: string[] = [];
    const dns = stubSecureResolver(
      new Map<string, TlsaRecord[] | 'servfail'>([
        ['_25._tcp.mx1.dane.test', [record, { ...record, usage: 1 }]],
        ['_25._tcp.mx3.dane.test', [{ ...record, usage: 1 }]],
        ['_25._tcp.mx4.dane.test', 'servfail'],
      ]),
      { asked },
    );
    const dane = await daneLookup(dns)(route);

    expect(dane('mx1.dane.test')).toEqual({ kind: 'tlsa', records: [record] });
    expect(dane('mx2.dane.test')).toEqual({ kind: 'none' });
    expect(dane('mx3.dane.test')).toEqual({ kind: 'encrypt' });
    expect(dane('mx4.dane.test')).toEqual({
      kind: 'unavailable',
      reason: 'TLSA lookup of _25._tcp.mx4.dane.test: SERVFAIL',
    });
    expect(asked).toContain('MX dane.test');
  });

  it('does not apply when the MX answer, or a host’s addresses, are not secure', async () => {
    const tlsa = new Map([['_25._tcp.mx1.dane.test', [record]]]);
    const insecureMx = await daneLookup(stubSecureResolver(tlsa, { insecure: new Set(['dane.test']) }))(route);
    const insecureAddress = await daneLookup(stubSecureResolver(tlsa, { insecure: new Set(['mx1.dane.test']) }))(route);

    expect(insecureMx('mx1.dane.test')).toEqual({ kind: 'none' });
    expect(insecureAddress('mx1.dane.test')).toEqual({ kind: 'none' });
  });

  it('asks nothing when no resolver on loopback can vouch for answers', async () => {
    const asked: string[] = [];
    const dns = { ...stubSecureResolver(new Map(), { asked }), trusted: false };

    expect((await daneLookup(dns)(route))('mx1.dane.test')).toEqual({ kind: 'none' });
    expect(asked).toEqual([]);
  });
});
