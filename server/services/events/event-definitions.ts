import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { CustomEvent, type EventSchemaMap, type ICustomEvent } from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';

/** Resend's reserved prefix: its own events, never a team's. */
export const RESERVED_PREFIX = 'resend:';

export function checkEventName(name: string, field = 'name'): void {
  if (name.toLowerCase().startsWith(RESERVED_PREFIX))
    throw validationError(`${field}: must not start with the reserved prefix ${RESERVED_PREFIX}`);
}

/** An event definition by id or by name; 404 for another team's. */
export async function requireEventDefinition(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  identifier: string,
): Promise<ICustomEvent> {
  const found = await deps.orm.em.findOne(
    CustomEvent,
    isUuid(identifier)
      ? { team: teamId, $or: [{ id: identifier }, { name: identifier }] }
      : { team: teamId, name: identifier },
  );
  if (!found) throw notFound('Event');
  return found;
}

export async function createEventDefinition(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  input: { name: string; schema: EventSchemaMap | null },
): Promise<ICustomEvent> {
  checkEventName(input.name);
  const em = deps.orm.em;
  if (await em.findOne(CustomEvent, { team: teamId, name: input.name }, { fields: ['id'] }))
    throw validationError(`name: an event named ${JSON.stringify(input.name)} exists already`, 409);
  const now = deps.clock();
  const event = em.create(CustomEvent, {
    team: teamId,
    name: input.name,
    schema: input.schema,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return event;
}

export function listEventDefinitions(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  page: PageQuery,
): Promise<Page<ICustomEvent>> {
  return paginate(deps.orm.em, CustomEvent, { team: teamId }, page);
}

export async function updateEventDefinition(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  identifier: string,
  schema: EventSchemaMap | null,
): Promise<ICustomEvent> {
  const event = await requireEventDefinition(deps, teamId, identifier);
  event.schema = schema;
  event.updatedAt = deps.clock();
  await deps.orm.em.flush();
  return event;
}

export async function deleteEventDefinition(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  identifier: string,
): Promise<string> {
  const event = await requireEventDefinition(deps, teamId, identifier);
  await deps.orm.em.nativeDelete(CustomEvent, { id: event.id });
  return event.id;
}
