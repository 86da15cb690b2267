import { LockMode } from '@mikro-orm/core';
import type { Deps } from '../../deps.js';
import { type ITopic, Topic, type TopicSubscription, type TopicVisibility } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { CONTACT_COLUMNS, contactEventData, selectContacts } from '../contacts/contact-records.js';
import { emitEvents } from '../events/emit-event.js';

/**
 * Changes a topic. A new default flips the effective value of every contact without an explicit
 * choice, and each of them gets its contact.topic_opt_in / _opt_out, in the same transaction.
 */
export async function updateTopic(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
  input: {
    name?: string;
    description?: string | null;
    defaultSubscription?: TopicSubscription;
    visibility?: TopicVisibility;
  },
): Promise<ITopic> {
  return deps.orm.em.transactional(async (em) => {
    const topic = await em.findOne(Topic, { id, team: teamId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!topic) throw notFound('Topic');
    const flips = input.defaultSubscription !== undefined && input.defaultSubscription !== topic.defaultSubscription;
    if (input.name !== undefined) topic.name = input.name;
    if (input.description !== undefined) topic.description = input.description;
    if (input.visibility !== undefined) topic.visibility = input.visibility;
    if (input.defaultSubscription !== undefined) topic.defaultSubscription = input.defaultSubscription;
    await em.flush();
    if (flips) {
      const affected = await selectContacts(
        em,
        `SELECT ${CONTACT_COLUMNS} FROM contact c WHERE c.team_id = ?
         AND NOT EXISTS (SELECT 1 FROM contact_topic ct WHERE ct.contact_id = c.id AND ct.topic_id = ?)`,
        [teamId, topic.id],
      );
      const type = topic.defaultSubscription === 'opt_in' ? 'contact.topic_opt_in' : 'contact.topic_opt_out';
      await emitEvents(
        em,
        affected.map((contact) => ({
          teamId,
          type,
          data: { ...contactEventData(contact, 'api'), topic_id: topic.id, topic_name: topic.name },
        })),
      );
    }
    return topic;
  });
}
