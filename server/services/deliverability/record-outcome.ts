import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { DeliverabilityMetric, IEmail } from '../../entities/index.js';
import { countOutcome } from './deliverability-counters.js';
import { type JudgeDeps, judgeTeam } from './judge-team.js';

const METRIC_OF: Readonly<Record<string, DeliverabilityMetric>> = {
  'email.bounced': 'bounce_rate',
  'email.complained': 'complaint_rate',
};

/**
 * The settings and clock that judge outcomes, per ORM. recordEmailEvent, which every provider path
 * calls with nothing but its transaction, finds them through the transaction's EntityManager
 * (its ORM's configuration object); createDeps registers them once per process.
 */
const judges = new WeakMap<object, JudgeDeps>();

export function judgeOutcomesWith(orm: MikroORM, deps: JudgeDeps): void {
  judges.set(orm.config, deps);
}

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
 * all in the caller's transaction. An ORM set up without deps (a bare script) only counts; the
 * recurring check judges the team within a minute.
 */
export async function recordDeliverabilityOutcome(tx: EntityManager, email: IEmail, type: string, at: Date, extra: Record<string, unknown>): Promise<void> {
  const metric = METRIC_OF[type];
  if (!metric || (metric === 'bounce_rate' && !isHardBounce(extra))) return;
  if (!(await countOutcome(tx, email, metric, type, at))) return;
  const deps = judges.get(tx.config);
  if (deps) await judgeTeam(deps, tx, email.team.id);
}
