import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Domain } from './domain.entity.js';
import { Team } from './team.entity.js';

/** Resend's claim statuses (see docs/domains.md for when Postlane reaches each). */
export const DOMAIN_CLAIM_STATUSES = [
  'pending',
  'verified',
  'completed',
  'blocked',
  'expired',
  'superseded',
  'canceled',
  'failed',
] as const;
export type DomainClaimStatus = (typeof DOMAIN_CLAIM_STATUSES)[number];

export const DOMAIN_CLAIM_BLOCKED_REASONS = [
  'grace_period',
  'recent_owner_activity',
  'pending_scheduled_emails',
] as const;
export type DomainClaimBlockedReason = (typeof DOMAIN_CLAIM_BLOCKED_REASONS)[number];

/** A team's bid to take over a domain name another team holds, proven by a TXT record at the name. */
export const DomainClaim = defineEntity({
  name: 'DomainClaim',
  indexes: [
    { name: 'domain_claim_domain_idx', properties: ['domain', 'createdAt'] },
    { name: 'domain_claim_name_idx', properties: ['name', 'completedAt'] },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team).deleteRule('cascade'),
    /** The claimant's placeholder domain; null once it was deleted (the claim then reads `canceled`). */
    domain: () => p.manyToOne(Domain).nullable().deleteRule('set null'),
    name: p.text(),
    region: p.text(),
    status: p.enum([...DOMAIN_CLAIM_STATUSES]),
    /** The value the TXT record at `name` must hold. */
    token: p.text(),
    blockedReason: p.enum([...DOMAIN_CLAIM_BLOCKED_REASONS]).nullable(),
    failureReason: p.text().nullable(),
    expiresAt: timestamp(),
    /** When the domain changed hands: a transferred domain cannot be claimed again for a grace period. */
    completedAt: timestamp().nullable(),
  },
});

export interface IDomainClaim extends InferEntity<typeof DomainClaim> {}
