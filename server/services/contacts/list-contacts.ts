import type { Page, PageQuery } from '../../db/paginate.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { validationError } from '../../errors.js';
import { segmentMembership, type SqlFragment } from '../segments/segment-filter.js';
import { requireSegment } from '../segments/get-segment.js';
import { loadAudienceCatalog } from './audience-catalog.js';
import { type ContactFacet, type ContactWithFacets, withFacets } from './contact-facets.js';
import { CONTACT_COLUMNS, selectContacts } from './contact-records.js';

/**
 * A team's contacts, or a segment's, newest first by (created_at, id) like every list (see
 * `paginate`), in SQL because segment membership is a SQL predicate.
 */
export async function listContacts(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  query: PageQuery & { segmentId?: string; include?: readonly ContactFacet[] },
): Promise<Page<ContactWithFacets>> {
  const em = deps.orm.em;
  const catalog = await loadAudienceCatalog(em, teamId, { segments: false });
  let scope: SqlFragment = { sql: 'c.team_id = ?', bindings: [teamId] };
  if (query.segmentId) {
    const membership = segmentMembership(await requireSegment(deps, teamId, query.segmentId), catalog);
    scope = { sql: `${scope.sql} AND ${membership.sql}`, bindings: [...scope.bindings, ...membership.bindings] };
  }
  const cursorId = query.after ?? query.before;
  let where = scope;
  if (cursorId) {
    const [cursor] = await sqlQuery<{ created_at: Date }>(
      em,
      `SELECT c.created_at FROM contact c WHERE ${scope.sql} AND c.id = ?`,
      [...scope.bindings, cursorId],
    );
    if (!cursor)
      throw validationError(`${query.after ? 'after' : 'before'}: must be the id of an item this list returned`);
    const op = query.after ? '<' : '>';
    where = {
      sql: `${scope.sql} AND (c.created_at, c.id) ${op} (?, ?)`,
      bindings: [...scope.bindings, cursor.created_at, cursorId],
    };
  }
  const direction = query.before ? 'ASC' : 'DESC';
  const rows = await selectContacts(
    em,
    `SELECT ${CONTACT_COLUMNS} FROM contact c WHERE ${where.sql} ORDER BY c.created_at ${direction}, c.id ${direction} LIMIT ?`,
    [...where.bindings, query.limit + 1],
  );
  const data = rows.slice(0, query.limit);
  if (query.before) data.reverse();
  return { data: await withFacets(em, data, query.include ?? [], catalog), hasMore: rows.length > query.limit };
}
