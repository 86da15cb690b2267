import type { Deps } from '../../deps.js';
import type { IWebhookEndpoint, WebhookEndpointStatus } from '../../entities/index.js';
import { assertDeliverableUrl } from './create-webhook.js';
import { disableEndpoint } from './disable-endpoint.js';
import { findEndpoint } from './get-webhook.js';

/**
 * Changes the URL, the events or the status. Disabling drops what the endpoint still owes;
 * enabling starts afresh (the exhausted streak is forgotten, the outage is not replayed).
 */
export async function updateWebhook(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  teamId: string,
  id: string,
  input: { url?: string; events?: string[]; status?: WebhookEndpointStatus },
): Promise<IWebhookEndpoint> {
  const em = deps.orm.em;
  const endpoint = await findEndpoint(em, teamId, id);
  if (input.url !== undefined) {
    await assertDeliverableUrl(deps, input.url);
    endpoint.url = input.url;
  }
  if (input.events !== undefined) endpoint.events = [...new Set(input.events)];
  if (input.status === 'enabled' && endpoint.status === 'disabled') {
    endpoint.status = 'enabled';
    endpoint.consecutiveExhausted = 0;
    endpoint.disabledAt = null;
  }
  await em.flush();
  if (input.status === 'disabled' && endpoint.status === 'enabled' && (await disableEndpoint(deps, endpoint.id)))
    await em.refresh(endpoint);
  return endpoint;
}

/** `postlane webhooks enable`: the same as PATCH {status: "enabled"}. */
export const enableWebhook = (deps: Pick<Deps, 'orm' | 'config' | 'clock'>, teamId: string, id: string) =>
  updateWebhook(deps, teamId, id, { status: 'enabled' });
