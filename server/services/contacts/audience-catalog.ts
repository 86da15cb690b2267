import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { ContactPropertyType, ContactPropertyValue, TopicSubscription, TopicVisibility } from '../../entities/index.js';

export interface CatalogTopic {
  id: string;
  name: string;
  description: string | null;
  defaultSubscription: TopicSubscription;
  visibility: TopicVisibility;
  createdAt: Date;
}

/** What a team has declared that contact writes refer to: property definitions, segments and topics. */
export interface AudienceCatalog {
  properties: Map<string, { type: ContactPropertyType; fallbackValue: ContactPropertyValue | null }>;
  segmentIds: Set<string>;
  topics: Map<string, CatalogTopic>;
}

export async function loadAudienceCatalog(em: EntityManager, teamId: string, parts: { segments?: boolean } = {}): Promise<AudienceCatalog> {
  const [properties, segments, topics] = await Promise.all([
    sqlQuery<{ key: string; type: ContactPropertyType; fallback_value: ContactPropertyValue | null }>(em, 'SELECT key, type, fallback_value FROM contact_property WHERE team_id = ?', [teamId]),
    parts.segments === false ? [] : sqlQuery<{ id: string }>(em, 'SELECT id FROM segment WHERE team_id = ?', [teamId]),
    sqlQuery<CatalogTopic>(
      em,
      `SELECT id, name, description, default_subscription AS "defaultSubscription", visibility, created_at AS "createdAt"
       FROM topic WHERE team_id = ? ORDER BY created_at, id`,
      [teamId],
    ),
  ]);
  return {
    properties: new Map(properties.map((p) => [p.key, { type: p.type, fallbackValue: p.fallback_value }])),
    segmentIds: new Set(segments.map((s) => s.id)),
    topics: new Map(topics.map((t) => [t.id, { ...t, createdAt: new Date(t.createdAt) }])),
  };
}

/** Why a set of property values does not fit the team's declarations (`properties.plan: …`), or null. */
export function checkPropertyValues(values: Record<string, ContactPropertyValue | null> | undefined, catalog: AudienceCatalog): string | null {
  for (const [key, value] of Object.entries(values ?? {})) {
    const declared = catalog.properties.get(key);
    if (!declared) return `properties.${key}: is not a contact property of this team (create it with POST /contact-properties first)`;
    if (value !== null && typeof value !== declared.type) return `properties.${key}: must be a ${declared.type}`;
  }
  return null;
}

/** Stored values with a patch applied: provided keys overwrite, null removes. */
export function mergeProperties(stored: Record<string, ContactPropertyValue>, patch: Record<string, ContactPropertyValue | null> | undefined): Record<string, ContactPropertyValue> {
  const merged = { ...stored };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** Why segment and topic references do not fit the team (`segments.0: …`), or null. */
export function checkReferences(input: { segments?: readonly string[]; topics?: readonly { id: string }[] }, catalog: AudienceCatalog): string | null {
  const segment = (input.segments ?? []).findIndex((id) => !catalog.segmentIds.has(id));
  if (segment >= 0) return `segments.${segment}: no segment with this id`;
  const topic = (input.topics ?? []).findIndex((t) => !catalog.topics.has(t.id));
  if (topic >= 0) return `topics.${topic}.id: no topic with this id`;
  return null;
}
