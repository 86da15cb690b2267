import type { Page } from '../db/paginate.js';

/** The list envelope every list endpoint answers with. */
export const presentList = <T, R>(page: Page<T>, present: (item: T) => R) => ({
  object: 'list' as const,
  has_more: page.hasMore,
  data: page.data.map(present),
});
