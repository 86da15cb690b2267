import type { DnsAnswer, DnsRecordType, DnsResolver } from './resolver.js';

type Entry<T> = { expiresAt: number; answer: Promise<T> };

/** Answers by question, each until it expires; at most `maxEntries`, oldest dropped first. */
export class ExpiringAnswers<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly maxEntries: number) {}

  get(key: string, now: number): Promise<T> | undefined {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > now ? entry.answer : undefined;
  }

  set(key: string, expiresAt: number, answer: Promise<T>): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { expiresAt, answer });
  }

  /** Shortens the entry for `key` to `expiresAt`, if it still holds `answer` and would outlive that. */
  expire(key: string, answer: Promise<T>, expiresAt: number): void {
    const entry = this.entries.get(key);
    if (entry?.answer !== answer) return;
    if (expiresAt <= 0) this.entries.delete(key);
    else entry.expiresAt = Math.min(entry.expiresAt, expiresAt);
  }
}

/**
 * DnsResolver's `query()` with its answers kept for a while, for direct delivery: every message to
 * a domain asks its MX and its hosts' A and AAAA records (and its MTA-STS TXT record), the same
 * answers thousands of times a minute. Answers, "missing" included, are kept for `ttlMs` (node does
 * not tell MX or TXT TTLs; a minute is under what mail hosts publish); a failure to ask
 * (`unavailable`) for `failureTtlMs` only, so a dead server is not asked per message but a
 * recovered one is soon heard again. Questions on the wire are shared; at most `maxEntries`.
 * Answers are frozen: every caller is handed the same one.
 */
export class DnsQueryCache implements Pick<DnsResolver, 'query'> {
  private readonly answers: ExpiringAnswers<DnsAnswer>;

  constructor(
    private readonly dns: Pick<DnsResolver, 'query'>,
    private readonly clock: () => number,
    private readonly ttlMs = 60_000,
    private readonly failureTtlMs = 5_000,
    maxEntries = 10_000,
  ) {
    this.answers = new ExpiringAnswers(maxEntries);
  }

  query(name: string, type: DnsRecordType): Promise<DnsAnswer> {
    const key = `${type} ${name.toLowerCase()}`;
    const now = this.clock();
    const kept = this.answers.get(key, now);
    if (kept) return kept;
    const answer = this.dns.query(name, type).then((found) => {
      if (found.kind === 'unavailable') this.answers.expire(key, answer, now + this.failureTtlMs);
      if (found.kind === 'found') Object.freeze(found.values);
      return Object.freeze(found);
    });
    this.answers.set(key, now + this.ttlMs, answer);
    return answer;
  }
}
