import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { notFound } from '../../errors.js';
import { resumeWaits } from '../automations/resume-waits.js';
import { createEventContact } from '../contacts/ensure-contact.js';
import type { EventVerdict, EventWrite } from './custom-event-writer.js';
import { checkEventName } from './event-definitions.js';
import { checkPayload } from './event-payload.js';

export interface SendEventInput {
  event: string;
  contactId?: string;
  email?: string;
  payload: Record<string, unknown>;
}

/** Enough for a schema that changed, a contact created apart and a concurrent creation of the same address. */
const ATTEMPTS = 4;

/**
 * POST /events/send: checks the payload against the event's schema (an event with no definition
 * has none), then writes it in a statement shared with concurrent sends (CustomEventWriter),
 * which finds the contact (by id, or by address, creating it when the team has none with that
 * address, without a team lock), records the event and starts the runs it triggers, provided the
 * schema is still the one checked. What that statement leaves to this function: a changed schema
 * (checked again), a new contact of a capped team (created under its cap lock) or of a team whose
 * webhooks announce new contacts (created with its deliveries, createEventContact), and a contact
 * with runs waiting for the event: the record, the runs and their resumption then share one
 * transaction. A wait that begins while the event is being recorded does not receive it, as if it
 * had begun just after. Workers are woken after the commit.
 */
export async function sendCustomEvent(
  deps: Pick<Deps, 'orm' | 'config' | 'clock' | 'jobs' | 'metrics' | 'customEvents'>,
  teamId: string,
  input: SendEventInput,
): Promise<{ event: string; contactId: string; runs: number }> {
  checkEventName(input.event, 'event');
  if (input.contactId !== undefined && !isUuid(input.contactId)) throw notFound('Contact');
  let schema = deps.customEvents.schemaOf(teamId, input.event);
  // A payload the schema this process last saw refuses is refused only once the event's current schema does.
  let unchecked = false;
  try {
    checkPayload(input.payload, schema);
  } catch (err) {
    if (!schema) throw err;
    unchecked = true;
  }
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const write: EventWrite = {
      teamId,
      name: input.event,
      contactId: input.contactId,
      email: input.email,
      payload: input.payload,
      schema,
      unchecked,
      at: deps.clock(),
    };
    let result: EventVerdict;
    try {
      result = await deps.customEvents.write(write);
      if (result.verdict === 'waiting') result = await writeResumingWaits(deps, write);
      if (result.verdict === 'capped' || result.verdict === 'announced')
        await createEventContact(deps, teamId, input.email!, result.verdict === 'capped');
    } catch (err) {
      // A concurrent send created the same new address first (23505): this one starts again and finds it.
      if ((err as { code?: string }).code !== '23505' || attempt === ATTEMPTS) throw err;
      continue;
    }
    if (result.verdict === 'no_contact') throw notFound('Contact');
    if (result.verdict === 'stale') {
      schema = result.schema;
      checkPayload(input.payload, schema);
      unchecked = false;
    }
    if (result.verdict === 'sent') {
      if (result.runs > 0) deps.metrics.automationRuns.inc({ status: 'started' }, result.runs);
      deps.jobs.wake('automation.steps');
      return { event: input.event, contactId: result.contactId, runs: result.runs };
    }
  }
  throw new Error(`The event ${input.event} was not written in ${ATTEMPTS} attempts`);
}

/** The event written and the contact's runs waiting for it resumed, in one transaction. */
function writeResumingWaits(
  deps: Pick<Deps, 'orm' | 'config' | 'customEvents'>,
  write: EventWrite,
): Promise<EventVerdict> {
  return deps.orm.em.transactional(async (em) => {
    const result = await deps.customEvents.write({ ...write, resumesWaits: true });
    if (result.verdict === 'sent')
      await resumeWaits(
        deps,
        em,
        write.teamId,
        result.contactId,
        { name: write.name, payload: write.payload },
        write.at,
      );
    return result;
  });
}
