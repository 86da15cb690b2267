import { createHmac } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SecretBox } from '../../security/secret-box.js';

/** Recent addresses' hashes, per key: every send hashes each recipient, and recipients recur. */
const recent = new WeakMap<SecretBox, LRUCache<string, Buffer>>();

/** How suppressions find an address: keyed, so the table never yields addresses to a dictionary. */
export function addressHash(secrets: SecretBox, address: string): Buffer {
  const normalized = address.toLowerCase();
  let cache = recent.get(secrets);
  if (!cache) recent.set(secrets, (cache = new LRUCache({ max: 10_000 })));
  let hash = cache.get(normalized);
  if (!hash)
    cache.set(normalized, (hash = createHmac('sha256', secrets.derive('address-hash')).update(normalized).digest()));
  // A copy: a caller may not change what the next one reads.
  return Buffer.from(hash);
}
