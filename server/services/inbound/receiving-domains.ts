import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { domainOfAddress } from '../domains/domain-name.js';

export interface ReceivingDomain {
  teamId: string;
  name: string;
}

/**
 * The teams that receive mail for these domain names: receiving enabled, and the domain verified
 * at least once, so a team cannot claim mail for a domain it never proved it controls (adding the
 * name and pointing nothing would otherwise be enough). A name verified by two teams serves both.
 */
export function findReceivingDomains(em: EntityManager, names: readonly string[]): Promise<ReceivingDomain[]> {
  return sqlQuery<ReceivingDomain>(
    em,
    'SELECT team_id AS "teamId", name FROM domain WHERE receiving AND verified_at IS NOT NULL AND name IN (SELECT jsonb_array_elements_text(?::jsonb))',
    [JSON.stringify([...new Set(names)])],
    'postlane_receiving_domains',
  );
}

/** A recipient as received mail stores and matches it: lower-case, its domain in the stored form. */
export function normalizeRecipient(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at).toLowerCase()}@${domainOfAddress(address)}`;
}
