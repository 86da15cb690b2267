import type { Deps } from '../../deps.js';
import { loadAudienceCatalog } from './audience-catalog.js';
import { type ContactFacet, type ContactWithFacets, withFacets } from './contact-facets.js';
import { findContacts, requireContact } from './contact-records.js';

/** GET /contacts/{id or email}: the contact with its property values. */
export async function getContact(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
): Promise<ContactWithFacets> {
  const em = deps.orm.em;
  const contact = await requireContact(em, teamId, idOrEmail);
  const [withValues] = await withFacets(
    em,
    [contact],
    ['properties'],
    await loadAudienceCatalog(em, teamId, { segments: false }),
  );
  return withValues!;
}

export type ContactRef = { id: string; email?: undefined } | { email: string; id?: undefined };

/** POST /contacts/batch/get: found contacts in request order, and the entries that matched none. */
export async function getContacts(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  refs: readonly ContactRef[],
  include: readonly ContactFacet[],
) {
  const em = deps.orm.em;
  const found = await findContacts(em, teamId, {
    ids: refs.flatMap((r) => (r.id ? [r.id] : [])),
    emails: refs.flatMap((r) => (r.email ? [r.email] : [])),
  });
  const byKey = new Map(found.flatMap((c) => [[c.id, c] as const, [c.email, c] as const]));
  const matched = refs.map((ref) => byKey.get((ref.id ?? ref.email).toLowerCase()));
  const present = matched.filter((c) => c !== undefined);
  const decorated = new Map(
    (await withFacets(em, present, include, await loadAudienceCatalog(em, teamId, { segments: false }))).map((c) => [
      c.id,
      c,
    ]),
  );
  return {
    data: present.map((c) => decorated.get(c.id)!),
    missing: refs.flatMap((ref, index) =>
      matched[index] ? [] : [{ index, id: ref.id ?? null, email: ref.email ?? null }],
    ),
  };
}
