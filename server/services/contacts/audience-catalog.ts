import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type {
  ContactPropertyType,
  ContactPropertyValue,
  TopicSubscription,
  TopicVisibility,
} from '../../entities/index.js';

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

/** One round trip: a bulk import reads the catalog on every call. */
export async function loadAudienceCatalog(
  em: EntityManager,
  teamId: string,
  parts: { segments?: boolean } = {},
): Promise<AudienceCatalog> {
  const [row] = await sqlQuery<{
    properties: { key: string; type: ContactPropertyType; fallback_value: ContactPropertyValue | null }[];
    segments: string[];
    topics: (Omit<CatalogTopic, 'createdAt'> & { createdAt: string })[];
  }>(
    em,
    `SELECT
       (SELECT coalesce(jsonb_agg(jsonb_build_object('key', key, 'type', type, 'fallback_value', fallback_value)), '[]') FROM contact_property WHERE team_id = ?) AS properties,
       CASE WHEN ? THEN (SELECT coalesce(jsonb_agg(id), '[]') FROM segment WHERE team_id = ?) ELSE '[]' END AS segments,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'name', name, 'description', description, 'defaultSubscription', default_subscription,
                 'visibility', visibility, 'createdAt', created_at) ORDER BY created_at, id), '[]') FROM topic WHERE team_id = ?) AS topics`,
    [teamId, parts.segments !== false, teamId, teamId],
  );
  const { properties, segments, topics } = row!;
  return {
    properties: new Map(properties.map((p) => [p.key, { type: p.type, fallbackValue: p.fallback_value }])),
    segmentIds: new Set(segments),
    topics: new Map(topics.map((t) => [t.id, { ...t, createdAt: new Date(t.createdAt) }])),
  };
}

/** Why a set of property values does not fit the team's declarations (`properties.plan: …`), or null. */
export function checkPropertyValues(
  values: Record<string, ContactPropertyValue | null> | undefined,
  catalog: AudienceCatalog,
): string | null {
  for (const [key, value] of Object.entries(values ?? {})) {
    const declared = catalog.properties.get(key);
    if (!declared)
      return `properties.${key}: is not a contact property of this team (create it with POST /contact-properties first)`;
    if (value !== null && typeof value !== declared.type) return `properties.${key}: must be a ${declared.type}`;
  }
  return null;
}

/** Stored values with a patch applied: provided keys overwrite, null removes. */
export function mergeProperties(
  stored: Record<string, ContactPropertyValue>,
  patch: Record<string, ContactPropertyValue | null> | undefined,
): Record<string, ContactPropertyValue> {
  const merged = { ...stored };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** Why segment and topic references do not fit the team (`segments.0: …`), or null. */
export function checkReferences(
  input: { segments?: readonly string[]; topics?: readonly { id: string }[] },
  catalog: AudienceCatalog,
): string | null {
  const segment = (input.segments ?? []).findIndex((id) => !catalog.segmentIds.has(id));
  if (segment >= 0) return `segments.${segment}: no segment with this id`;
  const topic = (input.topics ?? []).findIndex((t) => !catalog.topics.has(t.id));
  if (topic >= 0) return `topics.${topic}.id: no topic with this id`;
  return null;
}
