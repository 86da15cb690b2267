import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { type IWebhookAttempt, type IWebhookDelivery, WebhookAttempt, WebhookDelivery } from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';
import { findEndpoint } from './get-webhook.js';

/** The SDK's webhook events are one endpoint's deliveries, newest first (bodies not loaded). */
export async function listWebhookEvents(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  webhookId: string,
  page: PageQuery,
): Promise<Page<IWebhookDelivery>> {
  const endpoint = await findEndpoint(deps.orm.em, teamId, webhookId);
  return paginate(deps.orm.em, WebhookDelivery, { endpoint: endpoint.id }, page, ['body']);
}

export async function getWebhookEvent(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  webhookId: string,
  eventId: string,
): Promise<IWebhookDelivery> {
  const endpoint = await findEndpoint(deps.orm.em, teamId, webhookId);
  const delivery = isUuid(eventId)
    ? await deps.orm.em.findOne(WebhookDelivery, { id: eventId, endpoint: endpoint.id })
    : null;
  if (!delivery) throw notFound('Webhook event');
  return delivery;
}

/** Every request made for one delivery, newest first. */
export async function listWebhookAttempts(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  webhookId: string,
  eventId: string,
  page: PageQuery,
): Promise<Page<IWebhookAttempt>> {
  const delivery = await getWebhookEvent(deps, teamId, webhookId, eventId);
  return paginate(deps.orm.em, WebhookAttempt, { delivery: delivery.id }, page);
}

/**
 * Sends the event again, with the same message id (receivers deduplicate on it) and a fresh
 * schedule and 24-hour window. A delivery in flight is left to finish.
 */
export async function replayWebhookEvent(
  deps: Pick<Deps, 'orm' | 'clock' | 'jobs' | 'logger'>,
  teamId: string,
  webhookId: string,
  eventId: string,
): Promise<IWebhookDelivery> {
  const delivery = await getWebhookEvent(deps, teamId, webhookId, eventId);
  const endpoint = await findEndpoint(deps.orm.em, teamId, webhookId);
  if (endpoint.status !== 'enabled')
    throw validationError('This webhook is disabled; enable it before replaying events.');
  const now = deps.clock();
  await deps.orm.em.nativeUpdate(
    WebhookDelivery,
    { id: delivery.id, status: { $ne: 'sending' } },
    {
      status: 'pending',
      attempts: 0,
      dueAt: now,
      queuedAt: now,
      settledAt: null,
      leaseExpiresAt: null,
      lastError: null,
      updatedAt: now,
    },
  );
  await deps.jobs
    .enqueue('webhook.deliver', { endpointId: endpoint.id })
    .catch((err: Error) =>
      deps.logger.warn(
        { err: err.message, endpointId: endpoint.id },
        'could not wake the webhook worker; the sweep will',
      ),
    );
  return delivery;
}
