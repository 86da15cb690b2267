import type { Deps } from '../../deps.js';
import { type ITopic, Topic } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** 404 unless the team has this topic; another team's id reads exactly like a missing one. */
export async function requireTopic(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<ITopic> {
  const topic = await deps.orm.em.findOne(Topic, { id, team: teamId });
  if (!topic) throw notFound('Topic');
  return topic;
}
