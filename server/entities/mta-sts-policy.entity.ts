import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';

export const MTA_STS_MODES = ['enforce', 'testing', 'none'] as const;
export type MtaStsMode = (typeof MTA_STS_MODES)[number];

/**
 * A recipient domain's MTA-STS policy (RFC 8461) as last fetched, shared by every worker host so a
 * policy is fetched once per domain and kept through an outage of the domain's policy server.
 */
export const MtaStsPolicy = defineEntity({
  name: 'MtaStsPolicy',
  properties: {
    domain: p.text().primary(),
    /** The `id` of the `_mta-sts` TXT record the policy was fetched under: a new id means a new policy. */
    policyId: p.text(),
    mode: p.enum([...MTA_STS_MODES]),
    /** The policy's `mx` patterns, lower-case, `*.` wildcards kept. */
    mx: p.array().columnType('text[]'),
    maxAge: p.integer(),
    fetchedAt: timestamp(),
    /** fetchedAt + maxAge: until then the policy applies even when it can no longer be fetched. */
    expiresAt: timestamp(),
  },
});

export interface IMtaStsPolicy extends InferEntity<typeof MtaStsPolicy> {}
