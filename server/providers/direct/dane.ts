import { createHash, X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { DnssecResolver, SecureAnswer } from '../../dns/dnssec-resolver.js';
import type { MxRoute } from './mx-route.js';

/** A TLSA record (RFC 6698 §2.1): certificate usage, selector, matching type and association data. */
export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  data: Buffer;
}

/** RFC 7218's names for the usages SMTP uses (RFC 7672 §3.1). */
const DANE_TA = 2;
const DANE_EE = 3;
const DIGEST_LENGTH: Record<number, number> = { 1: 32, 2: 64 };
/** More certificates than any real chain; the rest of a longer one is not looked at. */
const MAX_CHAIN = 10;

/** What DANE asks of one MX host, for mail to one domain. */
export type HostDane =
  /** DANE does not apply (no validating resolver, an insecure answer, no TLSA records): MTA-STS or opportunistic TLS. */
  | { kind: 'none' }
  /** Usable TLSA records: STARTTLS, and a certificate that matches one of them. */
  | { kind: 'tlsa'; records: TlsaRecord[] }
  /** A secure TLSA RRset of which no record is usable: STARTTLS still, unauthenticated (RFC 7672 §2.2). */
  | { kind: 'encrypt' }
  /** The TLSA (or MX, or address) lookup failed, possibly a bogus answer: the host may not be used now. */
  | { kind: 'unavailable'; reason: string };

/** Looks up DANE for each MX host of a route. */
export type DaneLookup = (route: Extract<MxRoute, { kind: 'route' }>) => Promise<(host: string) => HostDane>;

const NONE: HostDane = { kind: 'none' };

/**
 * Records SMTP can use (RFC 7672 §3.1.3): DANE-TA(2) and DANE-EE(3) usages, Cert(0) or SPKI(1)
 * selectors, Full(0), SHA2-256(1) or SHA2-512(2) matching, a digest of the right length. PKIX-TA(0)
 * and PKIX-EE(1) are unusable for SMTP: there is no agreed set of CAs for MX hosts.
 */
export function usableTlsa(records: TlsaRecord[]): TlsaRecord[] {
  return records.filter(
    (record) =>
      (record.usage === DANE_TA || record.usage === DANE_EE) &&
      (record.selector === 0 || record.selector === 1) &&
      (record.matchingType === 0
        ? record.data.length > 0
        : record.data.length === (DIGEST_LENGTH[record.matchingType] ?? -1)),
  );
}

/** Whether `cert` is the one a record names: its DER (selector 0) or its public key's (1), whole or digested. */
function matches(cert: X509Certificate, record: TlsaRecord): boolean {
  const selected = record.selector === 0 ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
  const value =
    record.matchingType === 0
      ? selected
      : createHash(record.matchingType === 1 ? 'sha256' : 'sha512')
          .update(selected)
          .digest();
  return value.equals(record.data);
}

const inForce = (cert: X509Certificate, now: Date) => new Date(cert.validFrom) <= now && now <= new Date(cert.validTo);

/**
 * Whether the server's certificate chain (`chain[0]` its own, then the certificates it sent, each
 * issuing the one before) satisfies one of the usable records for MX host `host`:
 * - DANE-EE: the server's own certificate (or key) is the one named; names and dates are not
 *   checked (RFC 7672 §3.1.1), the record is the binding.
 * - DANE-TA: a certificate the server sent is the named trust anchor (RFC 7672 §3.1.2 has servers
 *   include it), every certificate below it is signed by the next one up and in force at `now`, and
 *   the server's certificate is valid for `host` (§3.2.3: a wildcard only as the whole left-most label).
 */
export function matchTlsa(
  chain: X509Certificate[],
  records: TlsaRecord[],
  host: string,
  now: Date,
): { ok: true; usage: 'DANE-EE' | 'DANE-TA' } | { ok: false; reason: string } {
  const [leaf] = chain;
  if (!leaf) return { ok: false, reason: 'the server presented no certificate' };
  if (records.some((record) => record.usage === DANE_EE && matches(leaf, record)))
    return { ok: true, usage: 'DANE-EE' };
  const anchors = records.filter((record) => record.usage === DANE_TA);
  for (let at = 1; at < Math.min(chain.length, MAX_CHAIN); at += 1) {
    if (!anchors.some((record) => matches(chain[at]!, record))) continue;
    const path = chain.slice(0, at + 1);
    const signed = path
      .slice(0, -1)
      .every((cert, i) => cert.checkIssued(path[i + 1]!) && cert.verify(path[i + 1]!.publicKey));
    if (!signed) return { ok: false, reason: 'the certificate chain up to the DANE-TA trust anchor does not verify' };
    if (!path.slice(0, -1).every((cert) => inForce(cert, now)))
      return { ok: false, reason: 'a certificate below the DANE-TA trust anchor is expired or not yet valid' };
    if (!leaf.checkHost(host, { wildcards: true, partialWildcards: false }))
      return { ok: false, reason: `the certificate is not valid for ${host} (DANE-TA)` };
    return { ok: true, usage: 'DANE-TA' };
  }
  return { ok: false, reason: 'no TLSA record matches the certificate' };
}

/** The server's certificate, then those it sent, each the issuer of the one before, as node's TLS socket links them. */
export function presentedChain(socket: TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && chain.length < MAX_CHAIN) {
    chain.push(new X509Certificate(cert.raw));
    // A self-signed certificate is its own issuer: the chain ends there.
    if (cert.issuerCertificate === cert) break;
    cert = cert.issuerCertificate;
  }
  return chain;
}

const asTlsa = (answer: Extract<SecureAnswer, { kind: 'found' }>): TlsaRecord[] =>
  answer.records.flatMap((record) =>
    record.type === 'TLSA'
      ? [
          {
            usage: record.data.usage,
            selector: record.data.selector,
            matchingType: record.data.matchingType,
            data: record.data.certificate,
          },
        ]
      : [],
  );

/**
 * DANE for SMTP (RFC 7672 §2.2) through a validating resolver: it applies to a domain whose MX
 * RRset (or, for an implicit MX, address) is secure, and to each MX host whose addresses are
 * secure; such a host's TLSA records at `_25._tcp.<host>` decide. A lookup that fails (SERVFAIL,
 * which is what a validating resolver answers for bogus data, or a timeout) makes the host
 * unusable for now rather than open to a downgrade. The TLSA base domain is the MX host name as
 * the MX record gives it; a CNAME leading from it is followed by the resolver.
 */
export function daneLookup(dns: Pick<DnssecResolver, 'query' | 'trusted'>): DaneLookup {
  return async (route) => {
    if (!dns.trusted) return () => NONE;
    const owner = await dns.query(route.domain, route.implicit ? 'A' : 'MX');
    if (owner.kind === 'unavailable') {
      const failed: HostDane = { kind: 'unavailable', reason: `DNSSEC lookup of ${route.domain}: ${owner.reason}` };
      return () => failed;
    }
    if (!owner.secure) return () => NONE;
    const byHost = new Map(
      await Promise.all(route.hosts.map(async (host) => [host.name, await hostDane(dns, host.name)] as const)),
    );
    return (host) => byHost.get(host) ?? NONE;
  };
}

async function hostDane(dns: Pick<DnssecResolver, 'query'>, host: string): Promise<HostDane> {
  const addresses = await Promise.all([dns.query(host, 'A'), dns.query(host, 'AAAA')]);
  const failed = addresses.find((answer) => answer.kind === 'unavailable');
  if (failed) return { kind: 'unavailable', reason: `DNSSEC address lookup of ${host}: ${failed.reason}` };
  if (!addresses.every((answer) => answer.kind !== 'unavailable' && answer.secure)) return NONE;
  const tlsa = await dns.query(`_25._tcp.${host}`, 'TLSA');
  if (tlsa.kind === 'unavailable')
    return { kind: 'unavailable', reason: `TLSA lookup of _25._tcp.${host}: ${tlsa.reason}` };
  if (tlsa.kind === 'missing' || !tlsa.secure) return NONE;
  const records = usableTlsa(asTlsa(tlsa));
  return records.length > 0 ? { kind: 'tlsa', records } : { kind: 'encrypt' };
}
