import * as v from 'valibot';
import { notFound } from '../../../errors.js';
import { defineRoute } from '../../route.js';
import { PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { OAuthGrantListSchema, RevokedOAuthGrantSchema } from './oauth-grants.schemas.js';

const TAGS = ['OAuth'];

/**
 * A self-hosted appliance has no OAuth applications, so no key was ever granted through one: the
 * list is always empty and every grant id is unknown. Answered (not 404 on the route) so that
 * the SDK's `oauthGrants` calls behave as on an account that never connected an app.
 */
export const oauthGrantRoutes = [
  defineRoute(
    {
      method: 'get',
      path: '/oauth/grants',
      operationId: 'listOAuthGrants',
      summary: 'List OAuth grants (always empty: a self-hosted appliance has no OAuth applications)',
      tags: TAGS,
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: OAuthGrantListSchema },
      examples: { response: { object: 'list', has_more: false, data: [] } },
    },
    () => ({ object: 'list' as const, has_more: false, data: [] }),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/oauth/grants/:id',
      operationId: 'revokeOAuthGrant',
      summary: 'Revoke an OAuth grant (there are none here: always 404)',
      tags: TAGS,
      permission: 'full_access',
      params: v.object({ id: v.pipe(v.string(), v.maxLength(200, 'is too long')) }),
      responses: { 200: RevokedOAuthGrantSchema },
      examples: {
        response: {
          object: 'oauth_grant',
          id: '5f8a7c1e-3b2d-4e6f-9a0b-1c2d3e4f5a6b',
          revoked_at: '2026-11-02T14:03:27.512Z',
          revoked_reason: 'user_revoked',
        },
      },
    },
    () => {
      throw notFound('OAuth grant');
    },
  ),
];
