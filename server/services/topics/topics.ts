import { LockMode } from '@mikro-orm/core';
import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { type ITopic, Topic, type TopicSubscription, type TopicVisibility } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { emitEvents } from '../events/emit-event.js';
import { CONTACT_COLUMNS, contactEventData, selectContacts } from '../contacts/contact-records.js';

export async function requireTopic(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<ITopic> {
  const topic = await deps.orm.em.findOne(Topic, { id, team: teamId });
  if (!topic) throw notFound('Topic');
  return topic;
}

export async function createTopic(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  input: { name: string; description?: string | null; defaultSubscription: TopicSubscription; visibility?: TopicVisibility },
): Promise<ITopic> {
  const topic = deps.orm.em.create(Topic, { team: teamId, name: input.name, description: input.description ?? null, defaultSubscription: input.defaultSubscription, visibility: input.visibility ?? 'private' });
  await deps.orm.em.flush();
  return topic;
}

export function listTopics(deps: Pick<Deps, 'orm'>, teamId: string, page: PageQuery): Promise<Page<ITopic>> {
  return paginate(deps.orm.em, Topic, { team: teamId }, page);
}

/**
 * Changes a topic. A new default flips the effective value of every contact without an explicit
 * choice, and each of them gets its contact.topic_opt_in / _opt_out, in the same transaction.
 */
export async function updateTopic(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
  input: { name?: string; description?: string | null; defaultSubscription?: TopicSubscription; visibility?: TopicVisibility },
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
      await emitEvents(em, affected.map((contact) => ({ teamId, type, data: { ...contactEventData(contact, 'api'), topic_id: topic.id, topic_name: topic.name } })));
    }
    return topic;
  });
}

/** Deletes a topic and every contact's choice for it. */
export async function deleteTopic(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  const topic = await requireTopic(deps, teamId, id);
  await deps.orm.em.remove(topic).flush();
}
