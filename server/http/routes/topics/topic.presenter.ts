import type { ITopic } from '../../../entities/index.js';

export const presentTopicListItem = (topic: ITopic) => ({
  id: topic.id,
  name: topic.name,
  description: topic.description ?? null,
  default_subscription: topic.defaultSubscription,
  visibility: topic.visibility,
  created_at: topic.createdAt.toISOString(),
});

export const presentTopic = (topic: ITopic) => ({ object: 'topic' as const, ...presentTopicListItem(topic) });
