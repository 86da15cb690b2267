import * as v from 'valibot';
import { listOf, TimestampSchema } from '../../schemas/common.schemas.js';

/** Resend's shape, for the document: this appliance never has one. */
export const OAuthGrantSchema = v.pipe(
  v.object({
    id: v.string(),
    client_id: v.string(),
    scopes: v.array(v.string()),
    created_at: TimestampSchema,
    revoked_at: v.nullable(TimestampSchema),
    revoked_reason: v.nullable(v.string()),
    client: v.object({ name: v.string(), logo_uri: v.nullable(v.string()) }),
  }),
  v.metadata({ title: 'OAuthGrant' }),
);

export const OAuthGrantListSchema = listOf(OAuthGrantSchema);

export const RevokedOAuthGrantSchema = v.pipe(
  v.object({
    object: v.literal('oauth_grant'),
    id: v.string(),
    revoked_at: TimestampSchema,
    revoked_reason: v.string(),
  }),
  v.metadata({ title: 'RevokeOAuthGrantResponse' }),
);
