import type { Deps } from '../../deps.js';
import { type ITopic, Topic, type TopicSubscription, type TopicVisibility } from '../../entities/index.js';

export async function createTopic(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  input: {
    name: string;
    description?: string | null;
    defaultSubscription: TopicSubscription;
    visibility?: TopicVisibility;
  },
): Promise<ITopic> {
  const topic = deps.orm.em.create(Topic, {
    team: teamId,
    name: input.name,
    description: input.description ?? null,
    defaultSubscription: input.defaultSubscription,
    visibility: input.visibility ?? 'private',
  });
  await deps.orm.em.flush();
  return topic;
}
