import { newId } from '../../db/ids.js';
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
 * that address: ensureContact, which takes no team lock), and in one transaction records the
 * event, starts the runs it triggers and resumes the waits it satisfies. Workers are woken after
 * the commit.
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
  // A concurrent send created the same new address first (23505): this one runs again and finds it.
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

function recordEvent(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  teamId: string,
  input: SendEventInput,
): Promise<{ event: string; contactId: string; runs: number }> {
  return deps.orm.em.transactional(async (em) => {
    let contact: { id: string; created: boolean };
    if (input.contactId) {
      const found = await requireContact(em, teamId, input.contactId).catch(() => null);
      if (!found) throw notFound('Contact');
      contact = { id: found.id, created: false };
    } else contact = await ensureContact(deps, em, teamId, input.email!);
    const now = deps.clock();
    const runs = await applyEvent(deps, em, teamId, contact.id, { name: input.event, payload: input.payload }, now, {
      newContact: contact.created,
      alongside: {
        ctes: `record AS (INSERT INTO custom_event_record (id, created_at, team_id, name, contact_id, payload) VALUES (?, ?, ?, ?, ?, ?::jsonb))`,
        bindings: [newId(), now, teamId, input.event, contact.id, JSON.stringify(input.payload)],
      },
    });
    return { event: input.event, contactId: contact.id, runs };
  });
}
