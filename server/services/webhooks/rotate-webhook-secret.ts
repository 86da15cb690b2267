import type { Deps } from '../../deps.js';
import { generateSigningSecret } from '../../webhooks/signing.js';
import { findEndpoint, type WebhookWithSecret } from './get-webhook.js';
import { DEFAULT_OVERLAP_HOURS } from './rotation-overlap.js';

export { DEFAULT_OVERLAP_HOURS };

/**
 * A new secret signs from now on. With an overlap, the secret it replaces keeps signing beside it
 * (new first) until the window ends; rotating again inside the window replaces that previous
 * secret; an overlap of 0 drops the old secret at once.
 */
export async function rotateWebhookSecret(
  deps: Pick<Deps, 'orm' | 'secrets' | 'clock'>,
  teamId: string,
  id: string,
  input: { overlapHours: number; signingSecret?: string },
): Promise<WebhookWithSecret> {
  const endpoint = await findEndpoint(deps.orm.em, teamId, id);
  const signingSecret = input.signingSecret ?? generateSigningSecret();
  if (input.overlapHours > 0) {
    endpoint.previousSecret = endpoint.secret;
    endpoint.previousSecretExpiresAt = new Date(deps.clock().getTime() + input.overlapHours * 3600 * 1000);
  } else {
    endpoint.previousSecret = null;
    endpoint.previousSecretExpiresAt = null;
  }
  endpoint.secret = deps.secrets.seal(signingSecret, `webhook:${endpoint.id}`);
  await deps.orm.em.flush();
  return { endpoint, signingSecret };
}
