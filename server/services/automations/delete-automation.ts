import type { Deps } from '../../deps.js';
import { Automation } from '../../entities/index.js';
import { requireAutomation } from './get-automation.js';

/** Deletes the automation with its versions and runs (their steps go too: a waiting run simply never resumes). */
export async function deleteAutomation(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  const automation = await requireAutomation(deps, teamId, id);
  await deps.orm.em.nativeDelete(Automation, { id: automation.id });
}
