import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { evaluateRule, FieldContext, type RunEvent } from './field-paths.js';
import type { ConditionRule } from './graph.js';
import { bookStepRun } from './start-runs.js';
import { loadVersion } from './versions.js';

/**
 * The resumption of the contact's runs waiting for an event, in the transaction that records it
 * (after its runs are started): those whose filter rule it passes are due now, by their
 * `event_received` edge. A wait the engine is finishing by its timeout holds its row: the event
 * waits for that commit and then finds the step no longer waiting. Answers the runs resumed.
 */
export async function resumeWaits(
  deps: Pick<Deps, 'config'>,
  em: EntityManager,
  teamId: string,
  contactId: string,
  event: RunEvent,
  now: Date,
): Promise<number> {
  const waiting = await sqlQuery<{ id: string; key: string; automation_id: string; version: number }>(
    em,
    `SELECT s.id, s.key, r.automation_id, r.version FROM automation_run_step s JOIN automation_run r ON r.id = s.run_id
      WHERE s.contact_id = ? AND s.wait_event = ? AND s.status = 'waiting' AND r.team_id = ?
      ORDER BY s.id FOR UPDATE OF s`,
    [contactId, event.name, teamId],
  );
  const resumed: string[] = [];
  for (const wait of waiting) {
    const graph = await loadVersion(deps, em, wait.automation_id, wait.version);
    const rule = graph?.steps.find((s) => s.key === wait.key)?.config.filter_rule as ConditionRule | undefined;
    if (rule && !(await evaluateRule(rule, new FieldContext(em, teamId, null, event)))) continue;
    resumed.push(wait.id);
  }
  if (resumed.length > 0)
    await sqlQuery(
      em,
      `UPDATE automation_run_step SET received = ?::jsonb, due_at = ?, wait_event = NULL
        WHERE id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid) AND status = 'waiting'`,
      [JSON.stringify(event), now, JSON.stringify(resumed)],
    );
  if (resumed.length > 0) await bookStepRun(em);
  return resumed.length;
}
