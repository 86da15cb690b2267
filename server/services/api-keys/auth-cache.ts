import type { Auth } from './auth.js';

/**
 * Recently verified keys, by token hash, for a few seconds: every API request authenticates, and
 * the lookup would otherwise be a round trip of its own. A revocation made through this process
 * evicts at once; other processes honour it within the TTL (POSTLANE_AUTH_CACHE_SECONDS).
 */
export class AuthCache {
  private readonly entries = new Map<string, { auth: Auth; expiresAt: number }>();
  /** Lookups under way: requests that miss together (a cold start, an expiry under load) share one. */
  private readonly loading = new Map<string, Promise<Auth>>();

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

  /** The lookup already under way for this token, or `lookup` started now. */
  async shared(tokenHash: string, lookup: () => Promise<Auth>): Promise<Auth> {
    const pending = this.loading.get(tokenHash);
    if (pending) return pending;
    const started = lookup();
    this.loading.set(tokenHash, started);
    try {
      return await started;
    } finally {
      if (this.loading.get(tokenHash) === started) this.loading.delete(tokenHash);
    }
  }

  evictKey(keyId: string): void {
    // A lookup under way may have read the key before the change: later requests start their own.
    this.loading.clear();
    for (const [hash, entry] of this.entries) if (entry.auth.keyId === keyId) this.entries.delete(hash);
  }
}
