import type { FilterQuery } from '@mikro-orm/core';
import { isUuid } from '../../db/ids.js';
import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { type ISuppression, Suppression, type SuppressionOrigin } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { addressHash } from './address-hash.js';

export function listSuppressions(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  query: PageQuery & { origin?: SuppressionOrigin },
): Promise<Page<ISuppression>> {
  return paginate(deps.orm.em, Suppression, { team: teamId, ...(query.origin ? { origin: query.origin } : {}) }, query);
}

/** Ids and addresses (any case) as one filter: an entry matches either way. */
export function suppressionFilter(
  deps: Pick<Deps, 'secrets'>,
  teamId: string,
  idsOrEmails: string[],
): FilterQuery<ISuppression> {
  const ids = idsOrEmails.filter(isUuid);
  const hashes = idsOrEmails.filter((x) => !isUuid(x)).map((email) => addressHash(deps.secrets, email));
  return { team: teamId, $or: [{ id: { $in: ids } }, { addressHash: { $in: hashes } }] };
}

/** By id or by address; another team's entry reads exactly like a missing one. */
export async function getSuppression(
  deps: Pick<Deps, 'orm' | 'secrets'>,
  teamId: string,
  idOrEmail: string,
): Promise<ISuppression> {
  const entry = await deps.orm.em.findOne(Suppression, suppressionFilter(deps, teamId, [idOrEmail]));
  if (!entry) throw notFound('Suppression');
  return entry;
}
