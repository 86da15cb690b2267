import * as v from 'valibot';

import { PLAN_NAMES, type PlanName } from './plan-names.js';

export { PLAN_NAMES, type PlanName } from './plan-names.js';

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const Nullable = <S extends v.GenericSchema>(schema: S) => v.nullable(schema);

const DailyPlanSchema = v.strictObject({
  quota: v.literal('daily'),
  emails_per_day: Count,
  domains: Nullable(Count),
  contacts: Nullable(Count),
});

const MonthlyPlanSchema = v.strictObject({
  quota: v.literal('monthly'),
  emails_per_month: Count,
  overage_usd_per_1k: v.pipe(v.number(), v.minValue(0)),
  domains: Nullable(Count),
  contacts: Nullable(Count),
});

export const PlanSchema = v.variant('quota', [DailyPlanSchema, MonthlyPlanSchema]);
export type Plan = v.InferOutput<typeof PlanSchema>;

/** What each plan includes unless POSTLANE_PLANS says otherwise; null means unlimited. */
export const DEFAULT_PLANS: Record<PlanName, Plan> = {
  free: { quota: 'daily', emails_per_day: 100, domains: 1, contacts: 1_000 },
  starter: { quota: 'daily', emails_per_day: 1_000, domains: 10, contacts: null },
  pro: { quota: 'monthly', emails_per_month: 50_000, overage_usd_per_1k: 0.9, domains: 1_000, contacts: null },
  scale: { quota: 'monthly', emails_per_month: 100_000, overage_usd_per_1k: 0.9, domains: 1_000, contacts: null },
};

/** POSTLANE_PLANS: a JSON object replacing whole plans by name, such as `{"free":{"quota":"daily","emails_per_day":50,…}}`. */
export const PlansSchema = v.pipe(
  v.union(
    [v.pipe(v.string(), v.parseJson(undefined, 'must be a JSON object of plans')), v.record(v.string(), v.unknown())],
    'must be a JSON object of plans',
  ),
  v.record(v.picklist(PLAN_NAMES, `plan names are ${PLAN_NAMES.join(', ')}`), PlanSchema),
  v.transform((overrides) => ({ ...DEFAULT_PLANS, ...overrides }) as Record<PlanName, Plan>),
);
