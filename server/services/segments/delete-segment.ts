import type { Deps } from '../../deps.js';
import { requireSegment } from './get-segment.js';

/** Deletes a segment and its static memberships; the contacts stay. */
export async function deleteSegment(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  const segment = await requireSegment(deps, teamId, id);
  await deps.orm.em.remove(segment).flush();
}
