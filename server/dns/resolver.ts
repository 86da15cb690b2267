import { Resolver } from 'node:dns/promises';
import type { Config } from '../../config/index.js';

/** What one DNS question got: the answers, none (the name or type does not exist), or no usable answer. */
export type DnsAnswer =
  { kind: 'found'; values: string[] } | { kind: 'missing' } | { kind: 'unavailable'; reason: string };

export type DnsRecordType = 'TXT' | 'CNAME' | 'MX' | 'A' | 'AAAA' | 'PTR';

/** Answers that mean "nothing published here", as opposed to "could not ask". */
const MISSING_CODES = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * Asks the configured DNS servers (POSTLANE_DNS_SERVERS, else the system's) with a timeout per
 * query, so a dead server costs a bounded wait and reads as a temporary failure, never as "missing".
 */
export class DnsResolver {
  private readonly timeoutMs: number;
  private readonly servers: readonly string[];

  constructor(config: Pick<Config, 'POSTLANE_DNS_SERVERS' | 'POSTLANE_DNS_TIMEOUT_MS'>) {
    this.servers = config.POSTLANE_DNS_SERVERS;
    this.timeoutMs = config.POSTLANE_DNS_TIMEOUT_MS;
  }

  async query(name: string, type: DnsRecordType): Promise<DnsAnswer> {
    // A resolver per query: `cancel()` on timeout must not abort a neighbour's question.
    const resolver = new Resolver({ timeout: this.timeoutMs, tries: 1 });
    if (this.servers.length > 0) resolver.setServers([...this.servers]);
    const timer = setTimeout(() => resolver.cancel(), this.timeoutMs + 500);
    try {
      return { kind: 'found', values: await this.ask(resolver, name, type) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (MISSING_CODES.has(code)) return { kind: 'missing' };
      return {
        kind: 'unavailable',
        reason: code === 'ETIMEOUT' || code === 'ECANCELLED' ? 'timeout' : code || (err as Error).message,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Node's own `resolve()` answer for any record type (A, AAAA, MX, TXT, PTR), with the same
   * servers and timeout: what mailauth's SPF, DKIM and DMARC checks expect of a resolver. Errors
   * keep node's codes (ENOTFOUND, ENODATA, ETIMEOUT), which mailauth tells apart.
   */
  async resolve(name: string, type: string): Promise<unknown> {
    const resolver = new Resolver({ timeout: this.timeoutMs, tries: 1 });
    if (this.servers.length > 0) resolver.setServers([...this.servers]);
    const timer = setTimeout(() => resolver.cancel(), this.timeoutMs + 500);
    try {
      return await resolver.resolve(name, type as 'TXT');
    } finally {
      clearTimeout(timer);
    }
  }

  private async ask(resolver: Resolver, name: string, type: DnsRecordType): Promise<string[]> {
    switch (type) {
      // A TXT record arrives in 255-byte strings; joined, they are the one value publishers wrote.
      case 'TXT':
        return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
      case 'CNAME':
        return (await resolver.resolveCname(name)).map((target) => target.replace(/\.$/, '').toLowerCase());
      case 'MX':
        return (await resolver.resolveMx(name)).map(
          (mx) => `${mx.priority} ${mx.exchange.replace(/\.$/, '').toLowerCase()}`,
        );
      case 'A':
        return resolver.resolve4(name);
      case 'AAAA':
        return resolver.resolve6(name);
      case 'PTR':
        return (await resolver.resolvePtr(name)).map((target) => target.replace(/\.$/, '').toLowerCase());
    }
  }
}
