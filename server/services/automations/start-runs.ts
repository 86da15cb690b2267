import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { AlongsideWrite } from '../events/emit-event.js';
import { evaluateRule, FieldContext, type RunEvent } from './field-paths.js';
import type { ConditionRule } from './graph.js';
import { loadVersion } from './versions.js';

/**
 * What an event does to automations, in the transaction that records it: a run of each enabled
 * automation it triggers (on that automation's current version, its trigger steps due now), and
 * the resumption of the contact's runs waiting for it whose filter rule it passes (due now, by
 * their `event_received` edge). A wait the engine is finishing by its timeout holds its row: the
 * event waits for that commit and then finds the step no longer waiting. The runs, their trigger
 * steps, the booking of a step run and the caller's `alongside` write (the event's record) are one
 * statement, so with `noWaits` (the caller found none) it needs no transaction. Answers the runs started.
 */
export async function applyEvent(
  deps: Pick<Deps, 'config'>,
  em: EntityManager,
  teamId: string,
  contactId: string,
  event: RunEvent,
  now: Date,
  options: { alongside?: AlongsideWrite; noWaits?: boolean } = {},
): Promise<number> {
  const alongside = options.alongside;
  const started = await sqlQuery<{ id: string }>(
    em,
    `WITH ${alongside ? `${alongside.ctes}, ` : ''}automations AS (
       SELECT a.id, a.version, v.steps FROM automation a
         JOIN automation_version v ON v.automation_id = a.id AND v.version = a.version
        WHERE a.team_id = ? AND a.status = 'enabled' AND ? = ANY (a.trigger_events)
     ), runs AS (
       INSERT INTO automation_run (id, created_at, updated_at, team_id, automation_id, version, contact_id, status, event)
       SELECT postlane_uuid_v7(), ?, ?, ?, id, version, ?, 'running', ?::jsonb FROM automations
       RETURNING id, automation_id
     ), steps AS (
       INSERT INTO automation_run_step (id, created_at, run_id, key, type, status, due_at, contact_id)
       SELECT postlane_uuid_v7(), ?, r.id, s->>'key', 'trigger', 'pending', ?, ?
         FROM runs r JOIN automations a ON a.id = r.automation_id, jsonb_array_elements(a.steps) s
        WHERE s->>'type' = 'trigger' AND s->'config'->>'event_name' = ?
     ), booked AS (${bookingSql('EXISTS (SELECT 1 FROM runs) AND')})
     SELECT id FROM runs`,
    [
      ...(alongside?.bindings ?? []),
      teamId,
      event.name,
      now,
      now,
      teamId,
      contactId,
      JSON.stringify(event),
      now,
      now,
      contactId,
      event.name,
      0,
      0,
    ],
  );
  if (options.noWaits) return started.length;

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
  return started.length;
}

/**
 * A run of `automation.steps` due `afterMs` from now (by the database's clock, which Agenda
 * reads), unless one not yet running is due by then: written in the caller's transaction (Agenda
 * cannot join it), so committed work always has a run coming; the caller wakes the workers after
 * the commit, and the sweeper is the backstop.
 */
export async function bookStepRun(em: EntityManager, afterMs = 0): Promise<void> {
  const seconds = Math.max(0, afterMs) / 1000;
  await sqlQuery(em, bookingSql(''), [seconds, seconds]);
}

/** The booking's INSERT, with a condition of the caller's (`… AND`) before the check for a run due by then. */
const bookingSql = (condition: string) =>
  `INSERT INTO agenda_jobs (name, priority, type, next_run_at, data)
   SELECT 'automation.steps', 0, 'normal', now() + make_interval(secs => ?), '{}'::jsonb
    WHERE ${condition} NOT EXISTS (SELECT 1 FROM agenda_jobs j WHERE j.name = 'automation.steps' AND j.locked_at IS NULL
                        AND j.next_run_at <= now() + make_interval(secs => ?))`;
