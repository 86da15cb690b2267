import { RequestContext } from '@mikro-orm/core';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { runDueSteps } from './run-due-steps.js';
import { bookStepRun } from './start-runs.js';

/**
 * One run of `automation.steps`: batches of due steps until none is due, the run's time is up, or
 * the worker is stopping; then it books the next run for the next step due (a delay's end, a
 * wait's timeout), or hands over at once when it stopped with steps still due.
 */
export async function drainAutomationSteps(deps: Deps): Promise<number> {
  const until = Date.now() + (deps.config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS * 1000) / 2;
  let done = 0;
  for (;;) {
    if (deps.jobs.stopping.aborted || Date.now() > until) break;
    const taken = await RequestContext.create(deps.orm.em, () => runDueSteps(deps));
    done += taken;
    if (taken === 0) break;
  }
  await bookNextStepRun(deps);
  return done;
}

/** Books the run for the earliest step due (now, when some is overdue); nothing when no step has a due time. */
export async function bookNextStepRun(deps: Deps): Promise<void> {
  const em = deps.orm.em.fork();
  const [next] = await sqlQuery<{ due_at: Date | null }>(
    em,
    `SELECT due_at FROM automation_run_step WHERE status IN ('pending', 'waiting') AND due_at IS NOT NULL ORDER BY due_at, id LIMIT 1`,
  );
  if (!next?.due_at) return;
  await bookStepRun(em, new Date(next.due_at).getTime() - deps.clock().getTime());
  deps.jobs.wake('automation.steps');
}
