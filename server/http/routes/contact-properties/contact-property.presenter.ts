import type { IContactProperty } from '../../../entities/index.js';

export const presentContactPropertyListItem = (property: IContactProperty) => ({
  id: property.id,
  key: property.key,
  type: property.type,
  fallback_value: property.fallbackValue ?? null,
  created_at: property.createdAt.toISOString(),
});

export const presentContactProperty = (property: IContactProperty) => ({
  object: 'contact_property' as const,
  ...presentContactPropertyListItem(property),
});
