import type { DomainRecord, IDomain, IDomainClaim } from '../../../entities/index.js';

export function presentDomainListItem(domain: IDomain) {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    created_at: domain.createdAt.toISOString(),
    region: domain.region,
    open_tracking: domain.openTracking,
    click_tracking: domain.clickTracking,
    tracking_subdomain: domain.trackingSubdomain,
    capabilities: {
      sending: 'enabled' as const,
      receiving: domain.receiving ? ('enabled' as const) : ('disabled' as const),
    },
  };
}

/** Resend's record shape; `live`, `detail`, `inherited_from` and `policy` once a check has run. */
export function presentDomainRecord({ required: _required, ...record }: DomainRecord) {
  return record;
}

export const presentDomain = (domain: IDomain) => ({
  object: 'domain' as const,
  ...presentDomainListItem(domain),
  records: domain.records.map(presentDomainRecord),
});

export const presentDomainRef = (domain: Pick<IDomain, 'id'>) => ({ object: 'domain' as const, id: domain.id });

export const presentVerifiedDomain = (domain: Pick<IDomain, 'id' | 'status'>) => ({
  object: 'domain' as const,
  id: domain.id,
  status: domain.status,
});

export const presentDeletedDomain = (domain: Pick<IDomain, 'id'>) => ({
  object: 'domain' as const,
  id: domain.id,
  deleted: true as const,
});

/** Resend's `domain_claim`: the TXT record goes at the domain's own name. */
export const presentDomainClaim = (claim: IDomainClaim) => ({
  object: 'domain_claim' as const,
  id: claim.id,
  name: claim.name,
  status: claim.status,
  domain_id: claim.domain?.id ?? null,
  region: claim.region,
  record: { type: 'TXT' as const, name: claim.name, value: claim.token, ttl: 'Auto' as const },
  blocked_reason: claim.blockedReason ?? null,
  failure_reason: claim.failureReason ?? null,
  created_at: claim.createdAt.toISOString(),
  expires_at: claim.expiresAt.toISOString(),
});
