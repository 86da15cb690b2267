/** The plans of cloud mode, in their own module so the CLI's `--help` reads them without loading valibot. */
export const PLAN_NAMES = ['free', 'starter', 'pro', 'scale'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];
