import { newId } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { WebhookEndpoint } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { generateSigningSecret } from '../../webhooks/signing.js';
import { checkEndpointUrl } from '../../webhooks/ssrf.js';
import type { WebhookWithSecret } from './get-webhook.js';

/** Refuses, early, a URL that points inside the network; the connect-time filter is the authority. */
export async function assertDeliverableUrl(deps: Pick<Deps, 'config'>, url: string): Promise<void> {
  const problem = await checkEndpointUrl(url, deps.config);
  if (problem) throw validationError(`endpoint: ${problem}`);
}

export async function createWebhook(
  deps: Pick<Deps, 'orm' | 'config' | 'secrets'>,
  teamId: string,
  input: { url: string; events: string[]; signingSecret?: string },
): Promise<WebhookWithSecret> {
  await assertDeliverableUrl(deps, input.url);
  const id = newId();
  const signingSecret = input.signingSecret ?? generateSigningSecret();
  const endpoint = deps.orm.em.create(WebhookEndpoint, {
    id,
    team: teamId,
    url: input.url,
    events: [...new Set(input.events)],
    status: 'enabled',
    secret: deps.secrets.seal(signingSecret, `webhook:${id}`),
  });
  await deps.orm.em.flush();
  return { endpoint, signingSecret };
}
