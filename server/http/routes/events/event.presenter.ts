import type { ICustomEvent } from '../../../entities/index.js';

export const presentEventListItem = (event: ICustomEvent) => ({
  id: event.id,
  name: event.name,
  schema: event.schema ?? null,
  created_at: event.createdAt.toISOString(),
  updated_at: event.updatedAt.toISOString(),
});

export const presentEvent = (event: ICustomEvent) => ({ object: 'event' as const, ...presentEventListItem(event) });
export const presentEventRef = (event: Pick<ICustomEvent, 'id'>) => ({ object: 'event' as const, id: event.id });
