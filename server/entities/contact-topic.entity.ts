import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';
import { Contact } from './contact.entity.js';
import { TOPIC_SUBSCRIPTIONS, Topic } from './topic.entity.js';

/** A contact's explicit choice for one topic; without a row the topic's default applies. */
export const ContactTopic = defineEntity({
  name: 'ContactTopic',
  // A topic's opt-ins or opt-outs counted from the index alone (a segment's count).
  indexes: [{ name: 'contact_topic_subscription_idx', properties: ['topic', 'subscription'] }],
  properties: {
    contact: () => p.manyToOne(Contact).primary().deleteRule('cascade'),
    topic: () => p.manyToOne(Topic).primary().deleteRule('cascade').index(),
    subscription: p.enum([...TOPIC_SUBSCRIPTIONS]),
    updatedAt: timestamp().onCreate(() => new Date()),
  },
});

export interface IContactTopic extends InferEntity<typeof ContactTopic> {}
