import type { MikroORM } from '@mikro-orm/postgresql';
import { preparedQuery } from '../../db/query.js';
import type { DomainStatus } from '../../entities/index.js';

export interface SenderDomain {
  id: string;
  name: string;
  region: string;
  status: DomainStatus;
}

/**
 * A team's domains as the sending path needs them, kept for a few seconds (POSTLANE_AUTH_CACHE_SECONDS):
 * every send consults them, and a query per send would cost a round trip. Changes made through this
 * process evict at once; a verification recorded by another process applies within the TTL.
 */
export class SenderDomainCache {
  private readonly entries = new Map<string, { domains: SenderDomain[]; expiresAt: number }>();
  /** Lookups under way: the sends that miss together (a cold start, an expiry under load) share one query. */
  private readonly loading = new Map<string, Promise<SenderDomain[]>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async forTeam(orm: MikroORM, teamId: string, now: number): Promise<SenderDomain[]> {
    const entry = this.entries.get(teamId);
    if (entry && entry.expiresAt > now) return entry.domains;
    // Inside a transaction the lookup is that transaction's own (it may see rows others cannot yet).
    if (orm.em.isInTransaction()) return this.query(orm, teamId);
    const pending = this.loading.get(teamId);
    if (pending) return pending;
    const lookup = this.query(orm, teamId).then((domains) => {
      // Kept only if no change evicted the team while the query ran: its answer may predate the change.
      if (this.loading.get(teamId) === lookup && this.ttlMs > 0) {
        this.entries.delete(teamId);
        if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        this.entries.set(teamId, { domains, expiresAt: now + this.ttlMs });
      }
      return domains;
    });
    this.loading.set(teamId, lookup);
    void lookup
      .finally(() => {
        if (this.loading.get(teamId) === lookup) this.loading.delete(teamId);
      })
      .catch(() => {});
    return lookup;
  }

  private query(orm: MikroORM, teamId: string): Promise<SenderDomain[]> {
    return preparedQuery<SenderDomain>(
      orm,
      'postlane_sender_domains',
      'SELECT id, name, region, status FROM domain WHERE team_id = ?',
      [teamId],
    );
  }

  evict(teamId: string): void {
    this.entries.delete(teamId);
    this.loading.delete(teamId);
  }
}
