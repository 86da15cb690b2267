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
 * A bounce or complaint recorded for an email: counted in the team's window, then the team judged,
 * all in the caller's transaction. An ORM set up without deps (a bare script) only counts; the
 * recurring check judges the team within a minute.
 */
export async function recordDeliverabilityOutcome(tx: EntityManager, email: IEmail, type: string, at: Date): Promise<void> {
  const metric = METRIC_OF[type];
  if (!metric || !(await countOutcome(tx, email, metric, type, at))) return;
  const deps = judges.get(tx.config);
  if (deps) await judgeTeam(deps, tx, email.team.id);
}
