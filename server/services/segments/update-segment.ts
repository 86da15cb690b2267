import type { Deps } from '../../deps.js';
import type { ISegment, SegmentFilter } from '../../entities/index.js';
import { loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { requireSegment } from './get-segment.js';
import { assertFilterUsable } from './segment-filter.js';

/** Renames a segment and/or replaces its filter. */
export async function updateSegment(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
  input: { name?: string; filter?: SegmentFilter },
): Promise<ISegment> {
  const segment = await requireSegment(deps, teamId, id);
  if (input.filter) {
    assertFilterUsable(input.filter, await loadAudienceCatalog(deps.orm.em, teamId, { segments: false }));
    segment.filter = input.filter;
  }
  if (input.name !== undefined) segment.name = input.name;
  await deps.orm.em.flush();
  return segment;
}
