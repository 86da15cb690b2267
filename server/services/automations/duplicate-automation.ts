import type { Deps } from '../../deps.js';
import type { IAutomation } from '../../entities/index.js';
import { writeAutomation } from './create-automation.js';
import { getAutomation } from './get-automation.js';

/** A copy of the current version, named "<name> (copy)", disabled so it starts no runs until enabled. */
export async function duplicateAutomation(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  id: string,
): Promise<IAutomation> {
  const { automation, graph } = await getAutomation(deps, teamId, id);
  return writeAutomation(deps, teamId, `${automation.name} (copy)`, 'disabled', graph);
}
