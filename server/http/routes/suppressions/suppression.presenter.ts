import type { ISuppression } from '../../../entities/index.js';

export const presentSuppressionRef = (entry: ISuppression) => ({ object: 'suppression' as const, id: entry.id });

export const presentDeletedSuppression = (entry: ISuppression) => ({
  object: 'suppression' as const,
  id: entry.id,
  deleted: true as const,
});

export function presentSuppressionListItem(entry: ISuppression) {
  return {
    id: entry.id,
    email: entry.email ?? '[erased]',
    origin: entry.origin,
    source_id: entry.sourceId ?? null,
    created_at: entry.createdAt.toISOString(),
  };
}

export const presentSuppression = (entry: ISuppression) => ({
  object: 'suppression' as const,
  ...presentSuppressionListItem(entry),
});
