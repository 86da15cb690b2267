import type { ProviderConfig } from '../../../config/index.js';

type DirectConfig = Extract<ProviderConfig, { type: 'direct' }>;

/** The pool of the source IPs in no named pool: the mail of teams not pinned to one leaves from it. */
export const DEFAULT_POOL = 'default';

/** One source address of a direct provider: what it says in EHLO, its pool and its warm-up. */
export interface SourceIdentity {
  ip: string;
  /** Its PTR name, which it gives in EHLO: its own `ehlo_name`, else the provider's. */
  ehloName: string;
  pool: string;
  /** Midnight UTC of its warm-up's first day, for an IP configured as new. */
  warmupFrom?: Date;
}

/** Every configured source IP of a direct provider, in configuration order; none when the system picks the address. */
export function sourceIdentities(config: Pick<DirectConfig, 'source_ips' | 'ehlo_name' | 'pools'>): SourceIdentity[] {
  const poolOf = new Map<string, string>();
  for (const [name, ips] of Object.entries(config.pools ?? {})) for (const ip of ips) poolOf.set(ip, name);
  return (config.source_ips ?? []).map((entry) => {
    const { ip, ehlo_name, warmup_from } = typeof entry === 'string' ? { ip: entry } : entry;
    return {
      ip,
      ehloName: ehlo_name ?? config.ehlo_name,
      pool: poolOf.get(ip) ?? DEFAULT_POOL,
      ...(warmup_from ? { warmupFrom: new Date(`${warmup_from}T00:00:00Z`) } : {}),
    };
  });
}

/**
 * The source IPs by pool. A message leaves from its team's pool, or from the default pool when the
 * team is pinned to none or to a pool this provider does not have (pools are per provider, so per region).
 */
export function sourcePools(identities: readonly SourceIdentity[]): Map<string, SourceIdentity[]> {
  const pools = new Map<string, SourceIdentity[]>();
  for (const identity of identities) pools.set(identity.pool, [...(pools.get(identity.pool) ?? []), identity]);
  return pools;
}
