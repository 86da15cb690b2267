import * as v from 'valibot';
import { PLAN_NAMES } from '../../../../config/plans.js';
import { TimestampSchema } from '../../schemas/common.schemas.js';

const Cap = v.nullable(v.number());

export const UsageSchema = v.pipe(
  v.object({
    object: v.literal('usage'),
    plan: v.nullable(v.picklist(PLAN_NAMES)),
    limits: v.nullable(
      v.object({
        emails_per_day: v.optional(v.number()),
        emails_per_month: v.optional(v.number()),
        domains: Cap,
        contacts: Cap,
      }),
    ),
    cloud: v.boolean(),
    accepted_today: v.number(),
    period: v.nullable(
      v.object({
        emails_sent: v.number(),
        included: v.number(),
        overage_enabled: v.boolean(),
        overage_usd_per_1k: v.number(),
        starts_at: TimestampSchema,
        ends_at: TimestampSchema,
      }),
    ),
  }),
  v.metadata({
    title: 'Usage',
    description: 'On a self-hosted instance plan, limits and period are null and cloud is false.',
  }),
);
