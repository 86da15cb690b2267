import type { Deps } from '../../deps.js';
import { type AutomationStatus, AutomationVersion, type IAutomation } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { requireAutomation } from './get-automation.js';
import { triggerEvents, validateGraph } from './graph.js';

/**
 * PATCH /automations/{id}: the name, the status, and the graph (steps and connections together).
 * A new graph is a new version: runs started from now on follow it, running runs finish on theirs.
 */
export async function updateAutomation(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  id: string,
  input: { name?: string; status?: AutomationStatus; steps?: unknown[]; connections?: unknown[] },
): Promise<IAutomation> {
  if ((input.steps === undefined) !== (input.connections === undefined))
    throw validationError('steps, connections: must be given together');
  if (input.name === undefined && input.status === undefined && input.steps === undefined)
    throw validationError('name, status, steps: give at least one');
  const graph = input.steps ? validateGraph(input.steps, input.connections!) : null;
  return deps.orm.em.transactional(async (em) => {
    const automation = await requireAutomation(deps, teamId, id);
    await em.lock(automation, 'pessimistic_write' as never);
    const now = deps.clock();
    if (input.name !== undefined) automation.name = input.name;
    if (input.status !== undefined) automation.status = input.status;
    if (graph) {
      automation.version += 1;
      automation.triggerEvents = triggerEvents(graph);
      em.create(AutomationVersion, { automation, version: automation.version, createdAt: now, ...graph });
    }
    automation.updatedAt = now;
    await em.flush();
    return automation;
  });
}
