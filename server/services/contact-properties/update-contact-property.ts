import type { Deps } from '../../deps.js';
import type { ContactPropertyValue, IContactProperty } from '../../entities/index.js';
import { checkFallback, requireContactProperty } from './get-contact-property.js';

/** Only the fallback changes: the key and type are what stored values were checked against. */
export async function updateContactProperty(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
  input: { fallbackValue?: ContactPropertyValue | null },
): Promise<IContactProperty> {
  const property = await requireContactProperty(deps, teamId, id);
  checkFallback(property.type, input.fallbackValue);
  if (input.fallbackValue !== undefined) property.fallbackValue = input.fallbackValue;
  await deps.orm.em.flush();
  return property;
}
