import type { EntityManager } from '@mikro-orm/postgresql';
import { type EntityName, type FilterQuery, raw } from '@mikro-orm/core';
import { validationError } from '../errors.js';

export interface PageQuery {
  limit: number;
  after?: string;
  before?: string;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/**
 * The one list helper: newest first by (created_at, id). A cursor must be an id this same list
 * returned (same filter, so another team's id is refused like an unknown one); `before` pages back.
 * The page seeks with a row value, `(created_at, id) < (x, y)`, which an index on
 * `(owner, created_at, id)` answers as a range; the same condition spelled with `OR` is applied
 * as a filter over every newer row, so a page deep in a list of millions read them all.
 */
export async function paginate<T extends { id: string; createdAt: Date }>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  page: PageQuery,
  /** Columns a list never shows (bodies): not loaded at all. */
  exclude: readonly (keyof T & string)[] = [],
): Promise<Page<T>> {
  const cursorId = page.after ?? page.before;
  let filter = where;
  if (cursorId) {
    const cursor = await em.findOne(entity, { $and: [where, { id: cursorId }] } as FilterQuery<T>, {
      fields: ['id', 'createdAt'] as never,
    });
    if (!cursor)
      throw validationError(`${page.after ? 'after' : 'before'}: must be the id of an item this list returned`);
    const op = page.after ? '<' : '>';
    const seek = raw<object, string>(
      (alias: string) => `(${alias}.created_at, ${alias}.id) ${op} (?, ?)`,
      [cursor.createdAt, cursor.id],
    );
    filter = { $and: [where, { [seek]: [] }] } as FilterQuery<T>;
  }
  const direction = page.before ? 'asc' : 'desc';
  const rows = await em.find(entity, filter, {
    orderBy: { createdAt: direction, id: direction } as never,
    limit: page.limit + 1,
    exclude: exclude as never,
  });
  const data = rows.slice(0, page.limit);
  if (page.before) data.reverse();
  return { data, hasMore: rows.length > page.limit };
}

/** The same paging over a short list already in memory, newest first (a contact's topics). */
export function paginateInMemory<T extends { id: string; createdAt: Date }>(
  items: readonly T[],
  page: PageQuery,
): Page<T> {
  const sorted = [...items].sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
  return paginateInOrder(sorted, page);
}

/** Paging over a short list in its own order (an email's attachments, as they appear in it). */
export function paginateInOrder<T extends { id: string }>(sorted: readonly T[], page: PageQuery): Page<T> {
  const cursorId = page.after ?? page.before;
  let start = 0;
  let end = sorted.length;
  if (cursorId) {
    const at = sorted.findIndex((item) => item.id === cursorId);
    if (at < 0)
      throw validationError(`${page.after ? 'after' : 'before'}: must be the id of an item this list returned`);
    if (page.after) start = at + 1;
    else end = at;
  }
  const data = page.before
    ? sorted.slice(Math.max(start, end - page.limit), end)
    : sorted.slice(start, start + page.limit);
  return { data, hasMore: page.before ? end - page.limit > start : start + page.limit < end };
}
