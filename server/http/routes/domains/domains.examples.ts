import type * as v from 'valibot';
import { CREATED_AT, ID } from '../../examples.js';
import type { DomainListItemSchema, DomainSchema } from './domains.schemas.js';

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
