import { createHash, X509Certificate } from 'node:crypto';
import type packet from 'dns-packet';
import type { DnssecResolver, SecureAnswer } from '../../server/dns/dnssec-resolver.js';
import type { TlsaRecord } from '../../server/providers/direct/dane.js';

/** The TLSA record naming `pem`'s certificate (selector 0) or public key (1), whole (0) or as SHA2-256 (1) or SHA2-512 (2). */
export function tlsaFor(pem: string, usage: number, selector: number, matchingType: number): TlsaRecord {
  const cert = new X509Certificate(pem);
  const selected = selector === 0 ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
  const data =
    matchingType === 0
      ? selected
      : createHash(matchingType === 1 ? 'sha256' : 'sha512')
          .update(selected)
          .digest();
  return { usage, selector, matchingType, data };
}

/** The record as zone-file text: `3 1 1 <hex>`. */
export const tlsaText = (record: TlsaRecord) =>
  `${record.usage} ${record.selector} ${record.matchingType} ${record.data.toString('hex')}`;

/**
 * A stub in place of a validating resolver: NOT a DNSSEC validator. Every answer it gives is
 * "secure", as a validating resolver's with the AD bit would be; the TLSA records are the test's,
 * `servfail` standing for a bogus answer. The real resolver (Unbound) is in test/topology/dane.test.ts.
 */
export function stubSecureResolver(
  tlsa: Map<string, TlsaRecord[] | 'servfail'>,
  {
    asked = [],
    insecure = new Set(),
  }: {
    /** Each question, `<type> <name>`, as it was asked. */
    asked?: string[];
    /** Names whose answers (MX, A, AAAA) come without the AD bit, as from an unsigned zone. */
    insecure?: Set<string>;
  } = {},
): Pick<DnssecResolver, 'query' | 'trusted'> {
  return {
    trusted: true,
    async query(name, type): Promise<SecureAnswer> {
      asked.push(`${type} ${name}`);
      if (type !== 'TLSA') return { kind: 'missing', secure: !insecure.has(name) };
      const records = tlsa.get(name);
      if (records === 'servfail') return { kind: 'unavailable', reason: 'SERVFAIL' };
      if (!records) return { kind: 'missing', secure: true };
      const answers: packet.Answer[] = records.map((record) => ({
        type: 'TLSA',
        name,
        ttl: 300,
        data: {
          usage: record.usage,
          selector: record.selector,
          matchingType: record.matchingType,
          certificate: record.data,
        },
      }));
      return { kind: 'found', records: answers, secure: true };
    },
  };
}
