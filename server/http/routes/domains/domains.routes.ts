import { claimDomain } from '../../../services/domains/claim-domain.js';
import { createDomain } from '../../../services/domains/create-domain.js';
import { deleteDomain } from '../../../services/domains/delete-domain.js';
import { getDomain } from '../../../services/domains/get-domain.js';
import { getDomainClaim } from '../../../services/domains/get-domain-claim.js';
import { listDomains } from '../../../services/domains/list-domains.js';
import { updateDomain } from '../../../services/domains/update-domain.js';
import { verifyDomain } from '../../../services/domains/verify-domain.js';
import { verifyDomainClaim } from '../../../services/domains/verify-domain-claim.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { DOMAIN, DOMAIN_CLAIM, DOMAIN_LIST_ITEM, DOMAIN_REF, NEW_DOMAIN } from './domains.examples.js';
import {
  presentDeletedDomain,
  presentDomain,
  presentDomainClaim,
  presentDomainListItem,
  presentDomainRef,
  presentVerifiedDomain,
} from './domain.presenter.js';
import {
  CreateDomainBodySchema,
  DeletedDomainSchema,
  DomainClaimSchema,
  DomainListItemSchema,
  DomainRefSchema,
  DomainSchema,
  UpdateDomainBodySchema,
  VerifiedDomainSchema,
} from './domains.schemas.js';

/** `capabilities.receiving` as the services take it: unset leaves it as it is. */
const receivingOf = (capabilities: { receiving?: 'enabled' | 'disabled' } | undefined) =>
  capabilities?.receiving === undefined ? undefined : capabilities.receiving === 'enabled';

export const domainRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/domains',
      operationId: 'createDomain',
      summary: 'Add a domain and get the DNS records to publish',
      tags: ['Domains'],
      permission: 'full_access',
      body: CreateDomainBodySchema,
      responses: { 201: DomainSchema },
      examples: { request: { name: 'acme.dev', click_tracking: true }, response: NEW_DOMAIN },
    },
    async ({ input: { body }, auth, deps }) =>
      presentDomain(
        await createDomain(deps, auth.teamId, {
          name: body.name,
          region: body.region,
          openTracking: body.open_tracking,
          clickTracking: body.click_tracking,
          trackingSubdomain: body.tracking_subdomain,
          receiving: receivingOf(body.capabilities),
        }),
      ),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/domains',
      operationId: 'listDomains',
      summary: 'List sending domains',
      tags: ['Domains'],
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(DomainListItemSchema) },
      examples: { response: exampleList(DOMAIN_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listDomains(deps, auth.teamId, query), presentDomainListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/domains/:id',
      operationId: 'getDomain',
      summary: 'Retrieve a domain with its records and what DNS last answered',
      tags: ['Domains'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DomainSchema },
      examples: { response: DOMAIN },
    },
    async ({ input: { params }, auth, deps }) => presentDomain(await getDomain(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/domains/:id',
      operationId: 'updateDomain',
      summary: 'Change tracking and receiving settings',
      tags: ['Domains'],
      permission: 'full_access',
      params: IdParamSchema,
      body: UpdateDomainBodySchema,
      responses: { 200: DomainRefSchema },
      examples: {
        request: { open_tracking: false, click_tracking: true, tracking_subdomain: 'links' },
        response: DOMAIN_REF,
      },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentDomainRef(
        await updateDomain(deps, auth.teamId, params.id, {
          openTracking: body.open_tracking,
          clickTracking: body.click_tracking,
          trackingSubdomain: body.tracking_subdomain,
          receiving: receivingOf(body.capabilities),
        }),
      ),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/domains/:id',
      operationId: 'deleteDomain',
      summary: 'Remove a domain and its DKIM key',
      tags: ['Domains'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedDomainSchema },
      examples: { response: { ...DOMAIN_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => presentDeletedDomain(await deleteDomain(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/domains/:id/verify',
      operationId: 'verifyDomain',
      summary: "Check the domain's DNS records now",
      tags: ['Domains'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: VerifiedDomainSchema },
      examples: { response: { ...DOMAIN_REF, status: 'verified' } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentVerifiedDomain(await verifyDomain(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/domains/claim',
      operationId: 'claimDomain',
      summary: 'Start taking over a domain another team of this appliance holds',
      tags: ['Domains'],
      permission: 'full_access',
      body: CreateDomainBodySchema,
      responses: { 201: DomainClaimSchema },
      examples: { request: { name: 'acme.dev' }, response: DOMAIN_CLAIM },
    },
    async ({ input: { body }, auth, deps, ctx }) => {
      const { claim, created } = await claimDomain(deps, auth.teamId, {
        name: body.name,
        region: body.region,
        openTracking: body.open_tracking,
        clickTracking: body.click_tracking,
        trackingSubdomain: body.tracking_subdomain,
      });
      // Resend's 200: the same open claim asked for again, returned unchanged.
      if (!created) ctx.status = 200;
      return presentDomainClaim(claim);
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/domains/:id/claim',
      operationId: 'getDomainClaim',
      summary: "Retrieve the latest claim of a claim's placeholder domain",
      tags: ['Domains'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DomainClaimSchema },
      examples: { response: DOMAIN_CLAIM },
    },
    async ({ input: { params }, auth, deps }) => presentDomainClaim(await getDomainClaim(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/domains/:id/claim/verify',
      operationId: 'verifyDomainClaim',
      summary: "Look for the claim's TXT record and, once found and the owner's checks pass, move the domain",
      tags: ['Domains'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DomainClaimSchema },
      examples: { response: { ...DOMAIN_CLAIM, status: 'completed' } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentDomainClaim(await verifyDomainClaim(deps, auth.teamId, params.id)),
  ),
];
