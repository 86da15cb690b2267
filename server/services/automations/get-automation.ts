import type { Deps } from '../../deps.js';
import { Automation, AutomationVersion, type IAutomation } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import type { Graph } from './graph.js';

/** The team's automation; 404 for another team's. */
export async function requireAutomation(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IAutomation> {
  const automation = await deps.orm.em.findOne(Automation, { id, team: teamId });
  if (!automation) throw notFound('Automation');
  return automation;
}

/** The automation with the graph of its current version. */
export async function getAutomation(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
): Promise<{ automation: IAutomation; graph: Graph }> {
  const automation = await requireAutomation(deps, teamId, id);
  const version = await deps.orm.em.findOneOrFail(AutomationVersion, {
    automation: automation.id,
    version: automation.version,
  });
  return { automation, graph: { steps: version.steps, connections: version.connections } as Graph };
}
