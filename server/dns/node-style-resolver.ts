import type packet from 'dns-packet';
import type { DnssecResolver, SecureRecordType } from './dnssec-resolver.js';

/** A DNS failure as node's resolver raises it: mailauth tells "nothing published" (ENOTFOUND) from "could not ask" by the code. */
const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

const NODE_TYPES = new Set<string>(['TXT', 'MX', 'A', 'AAAA', 'PTR']);

/** A TXT record's strings, as node's resolveTxt gives them (the 255-byte pieces kept apart). */
const txtStrings = (data: packet.TxtData): string[] =>
  (Array.isArray(data) ? data : [data]).map((piece) => (typeof piece === 'string' ? piece : piece.toString('utf8')));

/** One record in the shape node's `resolve()` gives for its type. */
function nodeShape(record: packet.Answer): unknown {
  switch (record.type) {
    case 'TXT':
      return txtStrings(record.data);
    case 'MX':
      return { exchange: record.data.exchange, priority: record.data.preference };
    default:
      return 'data' in record ? record.data : null;
  }
}

/**
 * A `resolve` in the shape of node's `dns.promises.resolve(name, type)` (what mailauth asks its
 * resolver for), answered by a DnssecResolver: each answer kept for the TTL its publisher gave it,
 * at most an hour, rather than a fixed time. No record of the type, or no such name, raises
 * ENOTFOUND; no usable answer (timeout, SERVFAIL) raises ETIMEOUT or ESERVFAIL, which mailauth
 * reads as a temporary error.
 */
export function nodeStyleResolver(dns: Pick<DnssecResolver, 'query'>) {
  return {
    async resolve(name: string, type: string): Promise<unknown[]> {
      if (!NODE_TYPES.has(type)) throw failure('ENOTIMP', `${type} records are not asked here`);
      const answer = await dns.query(name, type as SecureRecordType);
      if (answer.kind === 'missing') throw failure('ENOTFOUND', `no ${type} record for ${name}`);
      if (answer.kind === 'unavailable')
        throw failure(answer.reason.startsWith('timeout') ? 'ETIMEOUT' : 'ESERVFAIL', answer.reason);
      return answer.records.map(nodeShape);
    },
  };
}
