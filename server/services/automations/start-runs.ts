import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';

/**
 * The runs an event starts, as CTEs of the statement that records it: a run of each enabled
 * automation it triggers (on that automation's current version, its trigger steps due at once),
 * and the booking of a step run when any started. `source` is a relation of the events (`req`,
 * `team_id`, `contact_id`, `name`, `payload`, `at`); `started` holds a row per run, with its `req`.
 */
export function startRunsCtes(source: string): { sql: string; bindings: unknown[] } {
  return {
    sql: `started AS MATERIALIZED (
       SELECT postlane_uuid_v7() AS run_id, e.req, e.team_id, e.contact_id, e.name, e.payload, e.at, a.id AS automation_id, a.version, v.steps
         FROM ${source} e
         JOIN automation a ON a.team_id = e.team_id AND a.status = 'enabled' AND e.name = ANY (a.trigger_events)
         JOIN automation_version v ON v.automation_id = a.id AND v.version = a.version
     ), runs AS (
       INSERT INTO automation_run (id, created_at, updated_at, team_id, automation_id, version, contact_id, status, event)
       SELECT run_id, at, at, team_id, automation_id, version, contact_id, 'running', jsonb_build_object('name', name, 'payload', payload)
         FROM started
     ), trigger_steps AS (
       INSERT INTO automation_run_step (id, created_at, run_id, key, type, status, due_at, contact_id)
       SELECT postlane_uuid_v7(), r.at, r.run_id, s->>'key', 'trigger', 'pending', r.at, r.contact_id
         FROM started r, jsonb_array_elements(r.steps) s
        WHERE s->>'type' = 'trigger' AND s->'config'->>'event_name' = r.name
     ), booked AS (${bookingSql('EXISTS (SELECT 1 FROM started) AND')})`,
    bindings: [0, 0],
  };
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
