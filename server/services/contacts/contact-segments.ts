import type { Page, PageQuery } from '../../db/paginate.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { Segment, type ISegment } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { requireSegment } from '../segments/get-segment.js';
import { listSegments } from '../segments/list-segments.js';
import { segmentMembership } from '../segments/segment-filter.js';
import { loadAudienceCatalog } from './audience-catalog.js';
import { requireContact } from './contact-records.js';
import { addSegmentMembers } from './contact-writes.js';

/** The segments a contact is in: those it was added to, and those whose filter matches it now. */
export async function listContactSegments(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
  page: PageQuery,
): Promise<Page<ISegment>> {
  const em = deps.orm.em;
  const contact = await requireContact(em, teamId, idOrEmail);
  const catalog = await loadAudienceCatalog(em, teamId, { segments: false });
  const segments = await em.find(Segment, { team: teamId }, { fields: ['id', 'filter'] });
  const checks = segments.map((segment) => segmentMembership(segment, catalog));
  const matched = checks.length
    ? await sqlQuery<{ id: string }>(
        em,
        checks
          .map((check) => `SELECT ?::uuid AS id WHERE EXISTS (SELECT 1 FROM contact c WHERE c.id = ? AND ${check.sql})`)
          .join(' UNION ALL '),
        segments.flatMap((segment, i) => [segment.id, contact.id, ...checks[i]!.bindings]),
      )
    : [];
  return listSegments(
    deps,
    teamId,
    page,
    matched.map((row) => row.id),
  );
}

async function resolve(deps: Pick<Deps, 'orm'>, teamId: string, idOrEmail: string, segmentId: string) {
  const contact = await requireContact(deps.orm.em, teamId, idOrEmail);
  await requireSegment(deps, teamId, segmentId);
  return contact;
}

/** Adds a contact to a segment by hand (adding it twice changes nothing). */
export async function addContactToSegment(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
  segmentId: string,
): Promise<{ contactId: string }> {
  const contact = await resolve(deps, teamId, idOrEmail, segmentId);
  await addSegmentMembers(deps.orm.em, [{ segmentId, contactId: contact.id }]);
  return { contactId: contact.id };
}

/** Takes a contact's hand-made membership away; 404 when it had none (a filter match is not removable). */
export async function removeContactFromSegment(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
  segmentId: string,
): Promise<{ contactId: string }> {
  const contact = await resolve(deps, teamId, idOrEmail, segmentId);
  const removed = await sqlQuery(
    deps.orm.em,
    'DELETE FROM segment_member WHERE segment_id = ? AND contact_id = ? RETURNING contact_id',
    [segmentId, contact.id],
  );
  if (!removed.length) throw notFound('Segment membership');
  return { contactId: contact.id };
}
