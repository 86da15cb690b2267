import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { ContactProperty, type ContactPropertyType, type ContactPropertyValue, type IContactProperty } from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';

const checkFallback = (type: ContactPropertyType, fallback: ContactPropertyValue | null | undefined) => {
  if (fallback !== null && fallback !== undefined && typeof fallback !== type) throw validationError(`fallback_value: must be a ${type}, like the property`);
};

export async function requireContactProperty(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IContactProperty> {
  const property = await deps.orm.em.findOne(ContactProperty, { id, team: teamId });
  if (!property) throw notFound('Contact property');
  return property;
}

export async function createContactProperty(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  input: { key: string; type: ContactPropertyType; fallbackValue?: ContactPropertyValue | null },
): Promise<IContactProperty> {
  const em = deps.orm.em;
  checkFallback(input.type, input.fallbackValue);
  if (await em.count(ContactProperty, { team: teamId, key: input.key })) throw validationError(`key: the contact property ${input.key} already exists`);
  const property = em.create(ContactProperty, { team: teamId, key: input.key, type: input.type, fallbackValue: input.fallbackValue ?? null });
  await em.flush();
  return property;
}

export function listContactProperties(deps: Pick<Deps, 'orm'>, teamId: string, page: PageQuery): Promise<Page<IContactProperty>> {
  return paginate(deps.orm.em, ContactProperty, { team: teamId }, page);
}

/** Only the fallback changes: the key and type are what stored values were checked against. */
export async function updateContactProperty(deps: Pick<Deps, 'orm'>, teamId: string, id: string, input: { fallbackValue?: ContactPropertyValue | null }): Promise<IContactProperty> {
  const property = await requireContactProperty(deps, teamId, id);
  checkFallback(property.type, input.fallbackValue);
  if (input.fallbackValue !== undefined) property.fallbackValue = input.fallbackValue;
  await deps.orm.em.flush();
  return property;
}

/** Deletes the definition and every contact's value for it. */
export async function deleteContactProperty(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  await deps.orm.em.transactional(async (em) => {
    const property = await em.findOne(ContactProperty, { id, team: teamId });
    if (!property) throw notFound('Contact property');
    await sqlQuery(em, 'UPDATE contact SET properties = properties - ? WHERE team_id = ? AND jsonb_exists(properties, ?)', [property.key, teamId, property.key]);
    em.remove(property);
  });
}
