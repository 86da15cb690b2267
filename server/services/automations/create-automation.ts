import type { Deps } from '../../deps.js';
import { Automation, type AutomationStatus, AutomationVersion, type IAutomation } from '../../entities/index.js';
import { type Graph, triggerEvents, validateGraph } from './graph.js';

export interface AutomationInput {
  name: string;
  status?: AutomationStatus;
  steps: unknown[];
  connections: unknown[];
}

/** A new automation and its version 1, after the graph passes validateGraph (422 naming the step otherwise). */
export async function createAutomation(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  input: AutomationInput,
): Promise<IAutomation> {
  const graph = validateGraph(input.steps, input.connections);
  return writeAutomation(deps, teamId, input.name, input.status ?? 'disabled', graph);
}

export async function writeAutomation(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  name: string,
  status: AutomationStatus,
  graph: Graph,
): Promise<IAutomation> {
  const now = deps.clock();
  return deps.orm.em.transactional(async (em) => {
    const automation = em.create(Automation, {
      team: teamId,
      name,
      status,
      version: 1,
      triggerEvents: triggerEvents(graph),
      createdAt: now,
      updatedAt: now,
    });
    em.create(AutomationVersion, { automation, version: 1, createdAt: now, ...graph });
    await em.flush();
    return automation;
  });
}
