import { LockMode } from '@mikro-orm/core';
import type { Deps } from '../../deps.js';
import { type ISuppression, Suppression } from '../../entities/index.js';
import { emitEvent } from '../events/emit-event.js';
import { suppressionFilter } from './find-suppressions.js';
import { suppressionEventData } from './suppression-event.js';

/** Removes the entries named by id or address; unknown ones are skipped. Returns what was removed. */
export async function removeSuppressions(
  deps: Pick<Deps, 'orm' | 'secrets'>,
  teamId: string,
  idsOrEmails: string[],
  source: string,
): Promise<ISuppression[]> {
  return deps.orm.em.transactional(async (em) => {
    const entries = await em.find(Suppression, suppressionFilter(deps, teamId, idsOrEmails), {
      lockMode: LockMode.PESSIMISTIC_WRITE,
    });
    if (entries.length === 0) return [];
    await em.nativeDelete(Suppression, { id: { $in: entries.map((e) => e.id) } });
    for (const entry of entries)
      await emitEvent(em, { teamId, type: 'suppression.removed', data: suppressionEventData(entry, source) });
    return entries;
  });
}
