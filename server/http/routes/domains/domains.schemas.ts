import * as v from 'valibot';
import { DOMAIN_CLAIM_BLOCKED_REASONS, DOMAIN_CLAIM_STATUSES } from '../../../entities/domain-claim.entity.js';
import { DOMAIN_STATUSES, RECORD_STATUSES } from '../../../entities/domain.entity.js';
import { LineSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const TrackingSubdomainSchema = v.pipe(
  v.string(),
  v.regex(
    /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be one DNS label of lower-case letters, digits and hyphens, like `links`',
  ),
  v.metadata({
    description: 'Subdomain that tracked links and the open pixel use; its CNAME is required while tracking is on.',
  }),
);

const CapabilityStatusSchema = v.picklist(['enabled', 'disabled']);

/** `sending` is always on (other values are refused); `receiving` turns the inbound listener's acceptance and the `Receiving` MX record on or off. */
const CapabilitiesInputSchema = v.strictObject({
  sending: v.optional(v.picklist(['enabled'], 'sending is always enabled')),
  receiving: v.optional(
    v.pipe(
      CapabilityStatusSchema,
      v.metadata({
        description:
          'Receive mail for this domain (once verified) through the inbound SMTP listener; adds the `Receiving` MX record.',
      }),
    ),
  ),
});

/** What can be set at creation and changed later. */
const settingsFields = {
  open_tracking: v.optional(v.boolean()),
  click_tracking: v.optional(v.boolean()),
  tracking_subdomain: v.optional(TrackingSubdomainSchema),
  capabilities: v.optional(CapabilitiesInputSchema),
};

export const CreateDomainBodySchema = v.pipe(
  v.strictObject({
    name: v.pipe(LineSchema, v.minLength(1, 'must not be empty'), v.maxLength(253, 'must be at most 253 characters')),
    region: v.optional(
      v.pipe(
        v.string(),
        v.metadata({
          description: 'A region some configured provider serves; defaults to POSTLANE_DEFAULT_REGION. One per domain.',
        }),
      ),
    ),
    ...settingsFields,
  }),
  v.metadata({ title: 'CreateDomainRequest' }),
);

/** Only tracking and receiving can change; `tls`, `region` and anything else are refused with 422. */
export const UpdateDomainBodySchema = v.pipe(
  v.strictObject(settingsFields),
  v.metadata({ title: 'UpdateDomainRequest' }),
);

export const DomainRecordSchema = v.pipe(
  v.object({
    record: v.picklist(['DKIM', 'SPF', 'MX', 'DMARC', 'Tracking', 'Receiving']),
    name: v.string(),
    type: v.picklist(['TXT', 'CNAME', 'MX']),
    ttl: v.string(),
    status: v.picklist(RECORD_STATUSES),
    value: v.string(),
    priority: v.optional(v.number()),
    live: v.optional(
      v.pipe(
        v.string(),
        v.metadata({
          description: '`found`, or what DNS answers instead: `missing`, `no answer`, or the values published.',
        }),
      ),
    ),
    detail: v.optional(v.string()),
    inherited_from: v.optional(v.string()),
    policy: v.optional(v.string()),
  }),
  v.metadata({ title: 'DomainRecord' }),
);

const CapabilitiesSchema = v.object({ sending: v.literal('enabled'), receiving: CapabilityStatusSchema });

const domainFields = {
  id: UuidSchema,
  name: v.string(),
  status: v.picklist(DOMAIN_STATUSES),
  created_at: TimestampSchema,
  region: v.string(),
  open_tracking: v.boolean(),
  click_tracking: v.boolean(),
  tracking_subdomain: v.string(),
  capabilities: CapabilitiesSchema,
};

export const DomainListItemSchema = v.pipe(v.object(domainFields), v.metadata({ title: 'DomainListItem' }));

export const DomainSchema = v.pipe(
  v.object({ object: v.literal('domain'), ...domainFields, records: v.array(DomainRecordSchema) }),
  v.metadata({ title: 'Domain' }),
);

export const DomainRefSchema = v.object({ object: v.literal('domain'), id: UuidSchema });

export const VerifiedDomainSchema = v.object({
  object: v.literal('domain'),
  id: UuidSchema,
  status: v.picklist(DOMAIN_STATUSES),
});

export const DeletedDomainSchema = v.object({ object: v.literal('domain'), id: UuidSchema, deleted: v.literal(true) });

export const DomainClaimSchema = v.pipe(
  v.object({
    object: v.literal('domain_claim'),
    id: UuidSchema,
    name: v.string(),
    status: v.pipe(
      v.picklist(DOMAIN_CLAIM_STATUSES),
      v.metadata({
        description:
          '`pending` until the TXT record is found; `blocked` while a safety check holds the owner (see `blocked_reason`); `completed` once the domain is the claimant’s; `expired`, `superseded` (a newer claim of the team), `canceled` (placeholder deleted) or `failed` otherwise.',
      }),
    ),
    domain_id: v.pipe(
      v.nullable(UuidSchema),
      v.metadata({
        description: 'The placeholder domain the claim made in the claimant’s team; it becomes the domain.',
      }),
    ),
    region: v.nullable(v.string()),
    record: v.pipe(
      v.object({ type: v.literal('TXT'), name: v.string(), value: v.string(), ttl: v.literal('Auto') }),
      v.metadata({ title: 'DomainClaimRecord', description: 'The TXT record to publish at the domain’s own name.' }),
    ),
    blocked_reason: v.nullable(v.picklist(DOMAIN_CLAIM_BLOCKED_REASONS)),
    failure_reason: v.nullable(v.string()),
    created_at: TimestampSchema,
    expires_at: TimestampSchema,
  }),
  v.metadata({ title: 'DomainClaim' }),
);
