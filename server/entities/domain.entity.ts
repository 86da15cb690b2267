import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

/** Resend's domain statuses that Postlane reaches (see docs/domains.md for when). */
export const DOMAIN_STATUSES = ['pending', 'verified', 'partially_verified', 'failed', 'temporary_failure'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export const RECORD_STATUSES = ['not_started', 'pending', 'verified', 'failed', 'temporary_failure'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

/** One DNS record the domain needs (or is advised to have), with what the last check found. */
export interface DomainRecord {
  /** Resend's record kinds, plus DMARC. */
  record: 'DKIM' | 'SPF' | 'MX' | 'DMARC' | 'Tracking' | 'Receiving';
  name: string;
  type: 'TXT' | 'CNAME' | 'MX';
  ttl: string;
  value: string;
  priority?: number;
  /** Counts towards the domain's status; DMARC (recommended), the tracking CNAME and the receiving MX do not. */
  required: boolean;
  status: RecordStatus;
  /** `found`, or what DNS answers instead (`missing`, `no answer`, or the values found). */
  live?: string;
  /** The verdict in plain words. */
  detail?: string;
  /** DMARC published on a parent domain that covers this one. */
  inherited_from?: string;
  /** The DMARC policy found (`none`, `quarantine`, `reject`). */
  policy?: string;
}

export const Domain = defineEntity({
  name: 'Domain',
  uniques: [{ name: 'domain_team_name_unique', properties: ['team', 'name'] }],
  indexes: [
    { name: 'domain_next_check_idx', properties: ['nextCheckAt'] },
    // One owner per name across the appliance: adding and claiming look the name up in every team.
    { name: 'domain_name_idx', properties: ['name'] },
    // The inbound listener's RCPT TO lookup: receiving domains by name.
    {
      name: 'domain_receiving_name_idx',
      expression: `create index "domain_receiving_name_idx" on "domain" ("name") where receiving`,
    },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    /** Lower-case ASCII (IDNs in punycode), as a `from` address's domain is compared. */
    name: p.text(),
    region: p.text(),
    status: p.enum([...DOMAIN_STATUSES]),
    openTracking: p.boolean().default(false),
    clickTracking: p.boolean().default(false),
    trackingSubdomain: p.text().default('links'),
    /**
     * A claim's placeholder (POST /domains/claim): no records, key or provider identity, and never
     * checked or sending, until the claim completes and the domain moves here from its owner.
     */
    claiming: p.boolean().default(false),
    /** Resend's `capabilities.receiving`: the listener accepts mail for it (once verified) and `records` carries the MX record. */
    receiving: p.boolean().default(false),
    /** The records as the provider asked for them at creation, then as each check found them. */
    records: p.json<DomainRecord[]>(),
    /** For providers where Postlane signs: the selector and the private key, sealed for this row. */
    dkimSelector: p.text().nullable(),
    dkimPrivateKey: p.text().nullable(),
    /** Reached `verified` at least once: losing records later is reported, not treated as a new domain. */
    verifiedAt: timestamp().nullable(),
    lastCheckedAt: timestamp().nullable(),
    /** When the recurring check looks at it again; null = never (failed, waiting for a manual verify). */
    nextCheckAt: timestamp().nullable(),
    /** Checks in a row that did not verify the domain: drives the backoff. */
    checkAttempts: p.integer().default(0),
    /** Start of the current verification window (creation, a manual verify, or records lost); checks give up 72 h later. */
    checkingSince: timestamp().nullable(),
    updatedAt: timestamp()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export interface IDomain extends InferEntity<typeof Domain> {}
