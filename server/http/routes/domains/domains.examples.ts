import type * as v from 'valibot';
import { CREATED_AT, ID } from '../../examples.js';
import type { DomainClaimSchema, DomainListItemSchema, DomainSchema } from './domains.schemas.js';

export const DOMAIN_REF = { object: 'domain', id: ID.domain } as const;

export const DOMAIN_LIST_ITEM: v.InferInput<typeof DomainListItemSchema> = {
  id: ID.domain,
  name: 'acme.dev',
  status: 'verified',
  created_at: CREATED_AT,
  region: 'us-east-1',
  open_tracking: false,
  click_tracking: true,
  tracking_subdomain: 'links',
  capabilities: { sending: 'enabled', receiving: 'disabled' },
};

/** As created: the records to publish, not checked yet. */
export const NEW_DOMAIN: v.InferInput<typeof DomainSchema> = {
  object: 'domain',
  ...DOMAIN_LIST_ITEM,
  status: 'pending',
  records: [
    {
      record: 'DKIM',
      name: 'postlane._domainkey.acme.dev',
      type: 'TXT',
      ttl: 'Auto',
      status: 'not_started',
      value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAw3x…IDAQAB',
    },
    { record: 'SPF', name: 'acme.dev', type: 'TXT', ttl: 'Auto', status: 'not_started', value: 'v=spf1 a ~all' },
    {
      record: 'DMARC',
      name: '_dmarc.acme.dev',
      type: 'TXT',
      ttl: 'Auto',
      status: 'not_started',
      value: 'v=DMARC1; p=none;',
    },
    {
      record: 'Tracking',
      name: 'links.acme.dev',
      type: 'CNAME',
      ttl: 'Auto',
      status: 'not_started',
      value: 'mail.acme.dev',
    },
  ],
};

/** After a check: every record found as published. */
export const DOMAIN: v.InferInput<typeof DomainSchema> = {
  ...NEW_DOMAIN,
  status: 'verified',
  records: NEW_DOMAIN.records.map((record) => ({ ...record, status: 'verified', live: 'found' })),
};

/** A claim just started: the TXT record to publish at the domain's own name. */
export const DOMAIN_CLAIM: v.InferInput<typeof DomainClaimSchema> = {
  object: 'domain_claim',
  id: ID.domainClaim,
  name: 'acme.dev',
  status: 'pending',
  domain_id: ID.domain,
  region: 'us-east-1',
  record: {
    type: 'TXT',
    name: 'acme.dev',
    value: 'postlane-domain-verification=3f8a1c2d4e5b6a7f8091a2b3c4d5e6f7',
    ttl: 'Auto',
  },
  blocked_reason: null,
  failure_reason: null,
  created_at: CREATED_AT,
  expires_at: '2026-11-09T14:03:27.512Z',
};
