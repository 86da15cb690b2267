import type { Deps } from '../../deps.js';
import {
  ContactProperty,
  type ContactPropertyType,
  type ContactPropertyValue,
  type IContactProperty,
} from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { checkFallback } from './get-contact-property.js';

export async function createContactProperty(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  input: { key: string; type: ContactPropertyType; fallbackValue?: ContactPropertyValue | null },
): Promise<IContactProperty> {
  const em = deps.orm.em;
  checkFallback(input.type, input.fallbackValue);
  if (await em.count(ContactProperty, { team: teamId, key: input.key }))
    throw validationError(`key: the contact property ${input.key} already exists`);
  const property = em.create(ContactProperty, {
    team: teamId,
    key: input.key,
    type: input.type,
    fallbackValue: input.fallbackValue ?? null,
  });
  await em.flush();
  return property;
}
