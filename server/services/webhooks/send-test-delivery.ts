import type { Deps } from '../../deps.js';
import { validationError } from '../../errors.js';
import { type AttemptResult, postWebhook } from '../../webhooks/post-webhook.js';
import { createMessageId, decodeSigningSecret, signatureHeaders } from '../../webhooks/signing.js';
import { isDeliveredEventType } from './event-types.js';
import { findEndpoint } from './get-webhook.js';

export interface TestDelivery {
  endpointId: string;
  url: string;
  type: string;
  messageId: string;
  /** The exact bytes signed and sent. */
  body: string;
  result: AttemptResult;
}

/** A stand-in for the event's data, marked as a test; email events carry an email's fields so a receiver's parsing is exercised. */
function sampleData(type: string, now: Date): Record<string, unknown> {
  const email = type.startsWith('email.')
    ? {
        email_id: '00000000-0000-4000-8000-000000000000',
        from: 'Postlane <test@postlane.invalid>',
        to: ['test@postlane.invalid'],
        subject: 'Postlane webhook test',
        created_at: now.toISOString(),
      }
    : {};
  return { test: true, ...email };
}

/**
 * One signed POST of a test event to an endpoint, now, whatever its status and subscriptions: signed
 * with the current secret and sent through the delivery agents (the SSRF filter), as a delivery would
 * be. Nothing is stored and nothing is retried: the answer is returned for the operator to read.
 */
export async function sendTestDelivery(
  deps: Pick<Deps, 'orm' | 'secrets' | 'config' | 'clock' | 'webhookAgents'>,
  teamId: string,
  id: string,
  input: { type: string },
): Promise<TestDelivery> {
  if (!isDeliveredEventType(input.type))
    throw validationError(`event: ${input.type} is not an event type Postlane delivers`);
  const endpoint = await findEndpoint(deps.orm.em, teamId, id);
  const now = deps.clock();
  const body = JSON.stringify({ type: input.type, created_at: now.toISOString(), data: sampleData(input.type, now) });
  const messageId = createMessageId();
  const key = decodeSigningSecret(deps.secrets.open(endpoint.secret, `webhook:${endpoint.id}`))!;
  const headers = signatureHeaders([key], messageId, Math.floor(now.getTime() / 1000), body);
  const url = new URL(endpoint.url);
  const result = await postWebhook(
    deps.webhookAgents.for(url),
    url,
    headers,
    body,
    deps.config.POSTLANE_WEBHOOK_TIMEOUT_SECONDS * 1000,
  );
  return { endpointId: endpoint.id, url: endpoint.url, type: input.type, messageId, body, result };
}
