import type { Deps } from '../../deps.js';
import { requireTopic } from './get-topic.js';

/** Deletes a topic and every contact's choice for it. */
export async function deleteTopic(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  const topic = await requireTopic(deps, teamId, id);
  await deps.orm.em.remove(topic).flush();
}
