import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { domainOfAddress } from '../domains/domain-name.js';

export interface ReceivingDomain {
  teamId: string;
  name: string;
}

/**
 * The teams that receive mail for these domain names: receiving enabled, and the domain verified
 * now (its status, not `verified_at`), so a team cannot claim mail for a domain it never proved it
 * controls, nor keep receiving for one whose verification failed since (another team may own the
 * name today). A name verified now by two teams serves both.
 */
export function findReceivingDomains(em: EntityManager, names: readonly string[]): Promise<ReceivingDomain[]> {
  return sqlQuery<ReceivingDomain>(
    em,
    `SELECT team_id AS "teamId", name FROM domain WHERE receiving AND status = 'verified' AND name IN (SELECT jsonb_array_elements_text(?::jsonb))`,
    [JSON.stringify([...new Set(names)])],
    'postlane_receiving_domains',
  );
}

/** A recipient as received mail stores and matches it: lower-case, its domain in the stored form. */
export function normalizeRecipient(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at).toLowerCase()}@${domainOfAddress(address)}`;
}

/**
 * Whether a domain receives, as the listener asks at every RCPT TO, kept for a few seconds
 * (POSTLANE_AUTH_CACHE_SECONDS), answers "no" included: a client trying addresses of domains we do
 * not serve costs one query per domain and window, not one per recipient.
 */
export class ReceivingDomainCache {
  private readonly entries = new Map<string, { receives: boolean; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async receives(em: EntityManager, name: string, now: number): Promise<boolean> {
    const entry = this.entries.get(name);
    if (entry && entry.expiresAt > now) return entry.receives;
    const receives = (await findReceivingDomains(em, [name])).length > 0;
    if (this.ttlMs > 0) {
      this.entries.delete(name);
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(name, { receives, expiresAt: now + this.ttlMs });
    }
    return receives;
  }
}
