import type { Deps } from '../../deps.js';
import type { IDomain } from '../../entities/index.js';
import { withTrackingRecord } from './domain-records.js';
import { getDomain } from './get-domain.js';
import { domainStatus } from './domain-records.js';

export interface UpdateDomainInput {
  openTracking?: boolean;
  clickTracking?: boolean;
  trackingSubdomain?: string;
}

/**
 * Tracking settings. Turning tracking on (or moving its subdomain) asks for a tracking CNAME, which
 * is then required: the domain's status reflects it and the next check looks at it soon.
 */
export async function updateDomain(deps: Pick<Deps, 'orm' | 'config' | 'senderDomains' | 'clock'>, teamId: string, id: string, input: UpdateDomainInput): Promise<IDomain> {
  const domain = await getDomain(deps, teamId, id);
  const settings = {
    openTracking: input.openTracking ?? domain.openTracking,
    clickTracking: input.clickTracking ?? domain.clickTracking,
    trackingSubdomain: input.trackingSubdomain ?? domain.trackingSubdomain,
  };
  const records = withTrackingRecord(domain.records, domain.name, settings, deps.config);
  Object.assign(domain, settings);
  if (records !== domain.records) {
    domain.records = records;
    const now = deps.clock();
    domain.status = domainStatus(records, domain.verifiedAt !== null && domain.status === 'verified', true);
    domain.nextCheckAt = now;
  }
  await deps.orm.em.flush();
  deps.senderDomains.evict(teamId);
  return domain;
}
