import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { IAutomation } from '../../entities/index.js';
import { requireAutomation } from './get-automation.js';

/** Disables the automation and cancels its running runs (their open steps are skipped), in one transaction. */
export async function stopAutomation(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  id: string,
): Promise<IAutomation> {
  return deps.orm.em.transactional(async (em) => {
    const automation = await requireAutomation(deps, teamId, id);
    const now = deps.clock();
    automation.status = 'disabled';
    automation.updatedAt = now;
    await em.flush();
    await sqlQuery(
      em,
      `WITH runs AS (
         UPDATE automation_run SET status = 'cancelled', completed_at = ?, updated_at = ?
          WHERE automation_id = ? AND status = 'running' RETURNING id)
       UPDATE automation_run_step SET status = 'skipped', completed_at = ?, due_at = NULL
        WHERE run_id IN (SELECT id FROM runs) AND status IN ('pending', 'waiting', 'running')`,
      [now, now, automation.id, now],
    );
    return automation;
  });
}
