import { isUuid, newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { EventSchemaMap } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { applyEvent } from '../automations/start-runs.js';
import { createEventContact } from '../contacts/ensure-contact.js';
import { checkEventName } from './event-definitions.js';
import { checkPayload } from './event-payload.js';

export interface SendEventInput {
  event: string;
  contactId?: string;
  email?: string;
  payload: Record<string, unknown>;
}

/**
 * POST /events/send: checks the payload against the event's schema (an event with no definition
 * has none), finds the contact (by id, or by address, creating it when the team has none with
 * that address: createEventContact, which takes no team lock), then records the event and starts
 * the runs it triggers in one statement. When the contact has runs waiting for this event, the
 * record, the runs and their resumption share one transaction instead. A wait that begins while
 * the event is being recorded does not receive it, as if it had begun just after. Workers are
 * woken after the commit.
 */
export async function sendCustomEvent(
  deps: Pick<Deps, 'orm' | 'config' | 'clock' | 'jobs' | 'metrics'>,
  teamId: string,
  input: SendEventInput,
): Promise<{ event: string; contactId: string; runs: number }> {
  checkEventName(input.event, 'event');
  // A concurrent send created the same new address first (23505): this one starts again and finds it.
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await recordEvent(deps, teamId, input);
      if (result.runs > 0) deps.metrics.automationRuns.inc({ status: 'started' }, result.runs);
      deps.jobs.wake('automation.steps');
      return result;
    } catch (err) {
      if ((err as { code?: string }).code !== '23505' || attempt === 3) throw err;
    }
  }
}

/** What the event needs to know first, in one statement: its schema, the contact, the team's cap, waiting runs. */
const lookupSql = (contactBy: 'id' | 'email') => `
  SELECT (SELECT schema FROM custom_event WHERE team_id = ? AND name = ?) AS schema,
         c.id AS contact_id,
         (SELECT contact_limit IS NOT NULL FROM team WHERE id = ?) AS capped,
         EXISTS (SELECT 1 FROM automation_run_step s
                  WHERE s.contact_id = c.id AND s.wait_event = ? AND s.status = 'waiting') AS waiting
    FROM (SELECT (SELECT id FROM contact WHERE team_id = ? AND ${contactBy === 'id' ? 'id = ?::uuid' : 'email = ?'}) AS id) c`;

async function recordEvent(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  teamId: string,
  input: SendEventInput,
): Promise<{ event: string; contactId: string; runs: number }> {
  const byId = input.contactId !== undefined;
  if (byId && !isUuid(input.contactId!)) throw notFound('Contact');
  const [found] = await sqlQuery<{
    schema: EventSchemaMap | null;
    contact_id: string | null;
    capped: boolean;
    waiting: boolean;
  }>(deps.orm.em, lookupSql(byId ? 'id' : 'email'), [
    teamId,
    input.event,
    teamId,
    input.event,
    teamId,
    byId ? input.contactId : input.email,
  ]);
  checkPayload(input.payload, found!.schema);
  let contactId = found!.contact_id;
  if (!contactId) {
    if (byId) throw notFound('Contact');
    contactId = await createEventContact(deps, teamId, input.email!, found!.capped);
  }
  const now = deps.clock();
  const apply = (em: typeof deps.orm.em, noWaits: boolean) =>
    applyEvent(deps, em, teamId, contactId, { name: input.event, payload: input.payload }, now, {
      noWaits,
      alongside: {
        ctes: `record AS (INSERT INTO custom_event_record (id, created_at, team_id, name, contact_id, payload) VALUES (?, ?, ?, ?, ?, ?::jsonb))`,
        bindings: [newId(), now, teamId, input.event, contactId, JSON.stringify(input.payload)],
      },
    });
  const runs = found!.waiting
    ? await deps.orm.em.transactional((em) => apply(em, false))
    : await apply(deps.orm.em, true);
  return { event: input.event, contactId, runs };
}
