import type { TeamUsage } from '../../../services/usage/get-usage.js';

export function presentUsage(usage: TeamUsage, cloud: boolean) {
  const plan = usage.plan?.plan;
  return {
    object: 'usage' as const,
    plan: usage.plan?.name ?? null,
    limits: plan
      ? {
          ...(plan.quota === 'daily'
            ? { emails_per_day: plan.emails_per_day }
            : { emails_per_month: plan.emails_per_month }),
          domains: plan.domains,
          contacts: plan.contacts,
        }
      : null,
    cloud,
    accepted_today: usage.acceptedToday,
    period:
      plan?.quota === 'monthly' && usage.period
        ? {
            emails_sent: usage.period.emailsSent,
            included: plan.emails_per_month,
            overage_enabled: usage.plan!.overageEnabled,
            overage_usd_per_1k: plan.overage_usd_per_1k,
            starts_at: usage.period.startsAt.toISOString(),
            ends_at: usage.period.endsAt.toISOString(),
          }
        : null,
  };
}
