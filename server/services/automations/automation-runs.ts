import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import {
  AutomationRun,
  AutomationRunStep,
  type IAutomationRun,
  type IAutomationRunStep,
  type RunStatus,
} from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { requireAutomation } from './get-automation.js';

/** GET /automations/{id}/runs: newest first, optionally only some statuses. */
export async function listAutomationRuns(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  automationId: string,
  page: PageQuery,
  statuses: RunStatus[],
): Promise<Page<IAutomationRun>> {
  const automation = await requireAutomation(deps, teamId, automationId);
  return paginate(
    deps.orm.em,
    AutomationRun,
    statuses.length ? { automation: automation.id, status: { $in: statuses } } : { automation: automation.id },
    page,
  );
}

/** A run with its steps in the order they were reached; 404 when it is not this team's automation's. */
export async function getAutomationRun(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  automationId: string,
  runId: string,
): Promise<{ run: IAutomationRun; steps: IAutomationRunStep[] }> {
  const run = await deps.orm.em.findOne(AutomationRun, { id: runId, automation: automationId, teamId });
  if (!run) throw notFound('Automation run');
  const steps = await deps.orm.em.find(
    AutomationRunStep,
    { run: run.id },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return { run, steps };
}
