import type { Deps } from '../../deps.js';
import { Automation, type AutomationStatus, AutomationVersion, type IAutomation } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { type AutomationInput, writeAutomation } from './create-automation.js';
import { type Graph, validateGraph } from './graph.js';
import { updateAutomation } from './update-automation.js';

/** JSON with object keys sorted: a stored graph (jsonb reorders keys) compares equal to the same graph sent again. */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(',')}]`
    : typeof value === 'object' && value !== null
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
          .join(',')}}`
      : JSON.stringify(value);

/**
 * `postlane automations apply -f flow.json`: the team's automation of that name made to match the
 * file. None: created (disabled unless the file says otherwise). One: a new version only when the
 * graph differs from its current one, the status only when the file gives one; applied twice,
 * the second changes nothing. Two or more of that name: refused, as it cannot tell which.
 */
export async function applyAutomation(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  input: AutomationInput,
): Promise<{ automation: IAutomation; result: 'created' | 'updated' | 'unchanged' }> {
  const graph = validateGraph(input.steps, input.connections);
  const named = await deps.orm.em.find(Automation, { team: teamId, name: input.name }, { limit: 2 });
  if (named.length > 1)
    throw validationError(`name: ${named.length} automations are named ${JSON.stringify(input.name)}; rename one`, 409);
  const [current] = named;
  if (!current) {
    const automation = await writeAutomation(deps, teamId, input.name, input.status ?? 'disabled', graph);
    return { automation, result: 'created' };
  }
  const version = await deps.orm.em.findOneOrFail(AutomationVersion, {
    automation: current.id,
    version: current.version,
  });
  const same = (a: Graph, b: Graph) =>
    canonical({ steps: a.steps, connections: a.connections }) ===
    canonical({ steps: b.steps, connections: b.connections });
  const change: { status?: AutomationStatus; steps?: unknown[]; connections?: unknown[] } = {};
  if (!same(graph, version as unknown as Graph)) Object.assign(change, graph);
  if (input.status !== undefined && input.status !== current.status) change.status = input.status;
  if (Object.keys(change).length === 0) return { automation: current, result: 'unchanged' };
  return { automation: await updateAutomation(deps, teamId, current.id, change), result: 'updated' };
}
