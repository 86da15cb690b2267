import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { type IWebhookEndpoint, WebhookEndpoint } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** The team's endpoint, or 404 (another team's id answers exactly like a missing one). */
export async function findEndpoint(em: EntityManager, teamId: string, id: string): Promise<IWebhookEndpoint> {
  const endpoint = isUuid(id) ? await em.findOne(WebhookEndpoint, { id, team: teamId }) : null;
  if (!endpoint) throw notFound('Webhook');
  return endpoint;
}

export interface WebhookWithSecret {
  endpoint: IWebhookEndpoint;
  signingSecret: string;
}

/** A single read shows the current secret, opened from its sealed form. */
export async function getWebhook(
  deps: Pick<Deps, 'orm' | 'secrets'>,
  teamId: string,
  id: string,
): Promise<WebhookWithSecret> {
  const endpoint = await findEndpoint(deps.orm.em, teamId, id);
  return { endpoint, signingSecret: deps.secrets.open(endpoint.secret, `webhook:${endpoint.id}`) };
}
