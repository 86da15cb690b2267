import { newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { CustomEvent } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { applyEvent } from '../automations/start-runs.js';
import { requireContact } from '../contacts/contact-records.js';
import { ensureContact } from '../contacts/ensure-contact.js';
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
 * that address, without serialising the team's other sends: ensureContact), records the event, and in the same transaction starts the runs it triggers and
 * resumes the waits it satisfies. Workers are woken after the commit.
 */
export async function sendCustomEvent(
  deps: Pick<Deps, 'orm' | 'config' | 'clock' | 'jobs' | 'metrics'>,
  teamId: string,
  input: SendEventInput,
): Promise<{ event: string; contactId: string; runs: number }> {
  checkEventName(input.event, 'event');
  const definition = await deps.orm.em.findOne(
    CustomEvent,
    { team: teamId, name: input.event },
    { fields: ['schema'] },
  );
  checkPayload(input.payload, definition?.schema ?? null);
  const result = await deps.orm.em.transactional(async (em) => {
    let contactId: string;
    if (input.contactId) {
      const contact = await requireContact(em, teamId, input.contactId).catch(() => null);
      if (!contact) throw notFound('Contact');
      contactId = contact.id;
    } else contactId = await ensureContact(deps, em, teamId, input.email!);
    const now = deps.clock();
    await sqlQuery(
      em,
      `INSERT INTO custom_event_record (id, created_at, team_id, name, contact_id, payload) VALUES (?, ?, ?, ?, ?, ?::jsonb)`,
      [newId(), now, teamId, input.event, contactId, JSON.stringify(input.payload)],
    );
    const runs = await applyEvent(deps, em, teamId, contactId, { name: input.event, payload: input.payload }, now);
    return { event: input.event, contactId, runs };
  });
  if (result.runs > 0) deps.metrics.automationRuns.inc({ status: 'started' }, result.runs);
  deps.jobs.wake('automation.steps');
  return result;
}
