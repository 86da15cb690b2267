import type { Deps } from '../../deps.js';
import { type IWebhookEndpoint, WebhookEndpoint } from '../../entities/index.js';
import { findEndpoint } from './get-webhook.js';

/** Its deliveries and their attempts go with it (foreign keys cascade). */
export async function deleteWebhook(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IWebhookEndpoint> {
  const endpoint = await findEndpoint(deps.orm.em, teamId, id);
  await deps.orm.em.nativeDelete(WebhookEndpoint, { id: endpoint.id });
  return endpoint;
}
