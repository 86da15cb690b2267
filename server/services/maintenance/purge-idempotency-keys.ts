import type { Deps } from '../../deps.js';
import { IdempotencyKey } from '../../entities/index.js';

/** Keys answer for 24 hours; older rows are already treated as absent, this only reclaims the space. */
export async function purgeIdempotencyKeys(deps: Pick<Deps, 'orm' | 'clock'>): Promise<number> {
  const cutoff = new Date(deps.clock().getTime() - 24 * 3600 * 1000);
  return deps.orm.em.nativeDelete(IdempotencyKey, { createdAt: { $lt: cutoff } });
}
