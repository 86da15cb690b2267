import type { Deps } from '../../deps.js';
import {
  ContactProperty,
  type ContactPropertyType,
  type ContactPropertyValue,
  type IContactProperty,
} from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';

/** A fallback must have the property's own type. */
export const checkFallback = (type: ContactPropertyType, fallback: ContactPropertyValue | null | undefined) => {
  if (fallback !== null && fallback !== undefined && typeof fallback !== type)
    throw validationError(`fallback_value: must be a ${type}, like the property`);
};

/** 404 unless the team has this property; another team's id reads exactly like a missing one. */
export async function requireContactProperty(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
): Promise<IContactProperty> {
  const property = await deps.orm.em.findOne(ContactProperty, { id, team: teamId });
  if (!property) throw notFound('Contact property');
  return property;
}
