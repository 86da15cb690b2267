import type { ISuppression } from '../../entities/index.js';

/** `data` of suppression.added and suppression.removed; `source` is who made the change. */
export function suppressionEventData(entry: ISuppression, source: string | null) {
  return {
    id: entry.id,
    email: entry.email ?? '[erased]',
    origin: entry.origin,
    source,
    source_id: entry.sourceId ?? null,
    created_at: entry.createdAt.toISOString(),
  };
}
