import type { Deps } from '../../deps.js';
import { type ISegment, Segment } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { sqlQuery } from '../../db/query.js';
import { loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { segmentCount } from './segment-filter.js';

/** 404 unless the team has this segment; another team's id reads exactly like a missing one. */
export async function requireSegment(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<ISegment> {
  const segment = await deps.orm.em.findOne(Segment, { id, team: teamId });
  if (!segment) throw notFound('Segment');
  return segment;
}

/** A segment with the number of contacts in it now, counted exactly in SQL. */
export async function getSegment(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
): Promise<{ segment: ISegment; contactCount: number }> {
  const segment = await requireSegment(deps, teamId, id);
  const count = segmentCount(segment, await loadAudienceCatalog(deps.orm.em, teamId, { segments: false }), teamId);
  const [row] = await sqlQuery<{ n: string }>(deps.orm.em, count.sql, count.bindings);
  return { segment, contactCount: Number(row!.n) };
}
