import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { ContactProperty } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** Deletes the definition and every contact's value for it. */
export async function deleteContactProperty(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  await deps.orm.em.transactional(async (em) => {
    const property = await em.findOne(ContactProperty, { id, team: teamId });
    if (!property) throw notFound('Contact property');
    await sqlQuery(
      em,
      'UPDATE contact SET properties = properties - ? WHERE team_id = ? AND jsonb_exists(properties, ?)',
      [property.key, teamId, property.key],
    );
    em.remove(property);
  });
}
