import type { ISegment } from '../../../entities/index.js';

export const presentSegmentListItem = (segment: ISegment) => ({
  id: segment.id,
  name: segment.name,
  filter: segment.filter,
  created_at: segment.createdAt.toISOString(),
});

/** The same resource answers as `segment` or `audience`, following the path it was asked on. */
export const presentSegment = <O extends 'segment' | 'audience'>(object: O, segment: ISegment) => ({
  object,
  ...presentSegmentListItem(segment),
});

export const presentSegmentWithCount = <O extends 'segment' | 'audience'>(
  object: O,
  segment: ISegment,
  contactCount: number,
) => ({ ...presentSegment(object, segment), contact_count: contactCount });
