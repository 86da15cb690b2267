import type { EntityManager } from '@mikro-orm/postgresql';
import type { DeliverabilityMetric, EmailFacts } from '../../entities/index.js';
import { countOutcome } from './deliverability-counters.js';
import { type JudgeDeps, judgeTeam } from './judge-team.js';

const METRIC_OF: Readonly<Record<string, DeliverabilityMetric>> = {
  'email.bounced': 'bounce_rate',
  'email.complained': 'complaint_rate',
};

/**
 * Only hard bounces count (as with the providers' own rates): an `email.bounced` whose
 * `bounce.type` names another kind (SES's `Transient`, `Undetermined`) does not; one without a
 * type is taken as hard, as the spec defines `email.bounced`.
 */
function isHardBounce(extra: Record<string, unknown>): boolean {
  const type = (extra.bounce as { type?: unknown } | undefined)?.type;
  return typeof type !== 'string' || /^(permanent|hard)$/i.test(type);
}

/**
 * A bounce or complaint recorded for an email: counted in the team's window, then the team judged,
 * all in the caller's transaction.
 */
export async function recordDeliverabilityOutcome(
  deps: JudgeDeps,
  tx: EntityManager,
  email: EmailFacts,
  type: string,
  at: Date,
  extra: Record<string, unknown>,
): Promise<void> {
  const metric = METRIC_OF[type];
  if (!metric || (metric === 'bounce_rate' && !isHardBounce(extra))) return;
  if (!(await countOutcome(tx, email, metric, type, at))) return;
  await judgeTeam(deps, tx, email.team.id);
}
