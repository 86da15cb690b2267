import type { Deps } from '../../deps.js';
import { type ISegment, Segment, type SegmentFilter } from '../../entities/index.js';
import { loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { assertFilterUsable } from './segment-filter.js';

export const EMPTY_FILTER: SegmentFilter = { match: 'all', conditions: [] };

export async function createSegment(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  input: { name: string; filter?: SegmentFilter },
): Promise<ISegment> {
  const em = deps.orm.em;
  const filter = input.filter ?? EMPTY_FILTER;
  assertFilterUsable(filter, await loadAudienceCatalog(em, teamId, { segments: false }));
  const segment = em.create(Segment, { team: teamId, name: input.name, filter });
  await em.flush();
  return segment;
}
