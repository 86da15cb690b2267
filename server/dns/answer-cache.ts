import type { DnsResolver } from './resolver.js';

/** Answers that mean "nothing published here": kept like answers, since they are just as stable. */
const MISSING_CODES = new Set(['ENOTFOUND', 'ENODATA']);

type Entry = { expiresAt: number; answer: Promise<unknown> };

/**
 * DnsResolver's `resolve()` with its answers kept for a while: what received mail's SPF, DKIM and
 * DMARC checks ask is the same few names per sending domain, message after message. Node's
 * resolver does not tell a TXT record's TTL, so every answer is kept for `ttlMs`, a floor under the
 * TTLs such records are published with; "no such name / no such record" likewise. A failure to ask
 * (timeout, SERVFAIL) is never kept: the next message asks again. Questions already on the wire
 * are shared, so a burst from one sender asks once. At most `maxEntries` names, oldest dropped first.
 */
export class DnsAnswerCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly dns: Pick<DnsResolver, 'resolve'>,
    private readonly clock: () => number = Date.now,
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 10_000,
  ) {}

  resolve(name: string, type: string): Promise<unknown> {
    const key = `${type} ${name.toLowerCase()}`;
    const now = this.clock();
    const entry = this.entries.get(key);
    // A copy each time: the checker may change what it is handed.
    if (entry && entry.expiresAt > now) return entry.answer.then(structuredClone);
    const answer = this.dns.resolve(name, type);
    this.remember(key, { expiresAt: now + this.ttlMs, answer });
    answer.catch((err: unknown) => {
      if (!MISSING_CODES.has((err as NodeJS.ErrnoException).code ?? '') && this.entries.get(key)?.answer === answer)
        this.entries.delete(key);
    });
    return answer.then(structuredClone);
  }

  private remember(key: string, entry: Entry): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }
}
