import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { ContactPropertyType, ContactPropertyValue, TopicSubscription } from '../../entities/index.js';
import type { AudienceCatalog, CatalogTopic } from './audience-catalog.js';
import type { ContactRecord } from './contact-records.js';

export type ContactFacet = 'properties' | 'topics';

export interface ContactTopicState extends CatalogTopic {
  subscription: TopicSubscription;
  explicit: boolean;
}

export interface ContactWithFacets extends ContactRecord {
  propertyValues?: Record<string, { type: ContactPropertyType; value: ContactPropertyValue }>;
  topics?: ContactTopicState[];
}

/** Every declared property the contact has a value for, its own or the fallback. */
export function propertyValues(
  contact: ContactRecord,
  catalog: AudienceCatalog,
): NonNullable<ContactWithFacets['propertyValues']> {
  const values: NonNullable<ContactWithFacets['propertyValues']> = {};
  for (const [key, { type, fallbackValue }] of catalog.properties) {
    const value = contact.properties[key] ?? fallbackValue;
    if (value !== null && value !== undefined) values[key] = { type, value };
  }
  return values;
}

/** Each of the team's topics with the contact's effective choice: explicit when made, else the topic default. */
export async function topicStates(
  em: EntityManager,
  contacts: readonly ContactRecord[],
  catalog: AudienceCatalog,
): Promise<Map<string, ContactTopicState[]>> {
  const explicit =
    contacts.length && catalog.topics.size
      ? await sqlQuery<{ contact_id: string; topic_id: string; subscription: TopicSubscription }>(
          em,
          'SELECT contact_id, topic_id, subscription FROM contact_topic WHERE contact_id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid)',
          [JSON.stringify(contacts.map((c) => c.id))],
        )
      : [];
  const chosen = new Map(explicit.map((row) => [`${row.contact_id}/${row.topic_id}`, row.subscription]));
  return new Map(
    contacts.map((contact) => [
      contact.id,
      [...catalog.topics.values()].map((topic) => {
        const choice = chosen.get(`${contact.id}/${topic.id}`);
        return { ...topic, subscription: choice ?? topic.defaultSubscription, explicit: choice !== undefined };
      }),
    ]),
  );
}

/** The facets `include` asked for, attached to each contact. */
export async function withFacets(
  em: EntityManager,
  contacts: readonly ContactRecord[],
  include: readonly ContactFacet[],
  catalog: AudienceCatalog,
): Promise<ContactWithFacets[]> {
  const topics = include.includes('topics') ? await topicStates(em, contacts, catalog) : null;
  return contacts.map((contact) => ({
    ...contact,
    ...(include.includes('properties') ? { propertyValues: propertyValues(contact, catalog) } : {}),
    ...(topics ? { topics: topics.get(contact.id)! } : {}),
  }));
}
