import type { Auth } from './authenticate-api-key.js';

/**
 * Recently verified keys, by token hash, for a few seconds: every API request authenticates, and
 * the lookup would otherwise be a round trip of its own. A revocation made through this process
 * evicts at once; other processes honour it within the TTL (POSTLANE_AUTH_CACHE_SECONDS).
 */
export class AuthCache {
  private readonly entries = new Map<string, { auth: Auth; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(tokenHash: string, now: number): Auth | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.auth;
    this.entries.delete(tokenHash);
    return undefined;
  }

  set(tokenHash: string, auth: Auth, now: number): void {
    if (this.ttlMs <= 0) return;
    // Oldest first: Map keeps insertion order.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(tokenHash, { auth, expiresAt: now + this.ttlMs });
  }

  evictKey(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.auth.keyId === keyId) this.entries.delete(hash);
  }
}
