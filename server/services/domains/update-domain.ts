import type { Deps } from '../../deps.js';
import type { IDomain } from '../../entities/index.js';
import { withReceivingRecord, withTrackingRecord } from './domain-records.js';
import { getDomain } from './get-domain.js';

export interface UpdateDomainInput {
  openTracking?: boolean;
  clickTracking?: boolean;
  trackingSubdomain?: string;
  receiving?: boolean;
}

/**
 * Tracking and receiving. Turning tracking on (or moving its subdomain) asks for a tracking CNAME,
 * turning receiving on for the receiving MX, which the next check (on the recurring job's next
 * tick) looks at.
 */
export async function updateDomain(
  deps: Pick<Deps, 'orm' | 'config' | 'senderDomains' | 'clock'>,
  teamId: string,
  id: string,
  input: UpdateDomainInput,
): Promise<IDomain> {
  const domain = await getDomain(deps, teamId, id);
  const settings = {
    openTracking: input.openTracking ?? domain.openTracking,
    clickTracking: input.clickTracking ?? domain.clickTracking,
    trackingSubdomain: input.trackingSubdomain ?? domain.trackingSubdomain,
    receiving: input.receiving ?? domain.receiving,
  };
  const records = withReceivingRecord(
    withTrackingRecord(domain.records, domain.name, settings, deps.config),
    domain.name,
    settings,
    deps.config,
  );
  Object.assign(domain, settings);
  // A claim's placeholder gets its records when the domain moves to it.
  if (records !== domain.records && !domain.claiming) Object.assign(domain, { records, nextCheckAt: deps.clock() });
  await deps.orm.em.flush();
  deps.senderDomains.evict(teamId);
  return domain;
}
