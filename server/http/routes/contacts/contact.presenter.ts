import type { ContactTopicState, ContactWithFacets } from '../../../services/contacts/contact-facets.js';
import type { ContactRecord } from '../../../services/contacts/contact-records.js';

export const presentContactRef = (id: string) => ({ object: 'contact' as const, id });

export const presentDeletedContact = (id: string) => ({
  object: 'contact' as const,
  id,
  contact: id,
  deleted: true as const,
});

export const presentContactTopic = (topic: ContactTopicState) => ({
  id: topic.id,
  name: topic.name,
  description: topic.description,
  subscription: topic.subscription,
  explicit: topic.explicit,
  visibility: topic.visibility,
});

/** A list item: the base shape, plus the facets `include` asked for. */
export function presentContactListItem(contact: ContactWithFacets) {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.firstName,
    last_name: contact.lastName,
    created_at: new Date(contact.createdAt).toISOString(),
    unsubscribed: contact.unsubscribed,
    ...(contact.propertyValues ? { properties: contact.propertyValues } : {}),
    ...(contact.topics ? { topics: contact.topics.map(presentContactTopic) } : {}),
  };
}

export const presentContact = (contact: ContactWithFacets) => ({
  object: 'contact' as const,
  ...presentContactListItem(contact),
  properties: contact.propertyValues ?? {},
});

export const presentContactSegment = (contactId: string, segmentId: string) => ({
  object: 'contact_segment' as const,
  id: segmentId,
  contact_id: contactId,
  segment_id: segmentId,
});

export const presentContactTopics = (contact: ContactRecord, topics: ContactTopicState[]) => ({
  object: 'contact_topics' as const,
  id: contact.id,
  contact_id: contact.id,
  topics: topics.map(presentContactTopic),
});
