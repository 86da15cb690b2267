import type { Config } from '../../../config/index.js';
import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import {
  Email,
  EmailRecipient,
  Event,
  type IEmail,
  type IEmailRecipient,
  WebhookDelivery,
} from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** Where an email stands with its provider: what the API's `last_event` alone does not say. */
export interface DeliveryState {
  attempts: number;
  max_attempts: number;
  /** The provider's last refusal or error, kept while the email is retried and after it failed. */
  last_error: string | null;
  /** When the next attempt is due; null once the email is settled (or while one is in flight). */
  next_attempt_at: string | null;
}

export function deliveryState(
  email: Pick<IEmail, 'status' | 'attempts' | 'lastError' | 'sendAfter'>,
  config: Pick<Config, 'POSTLANE_SEND_MAX_ATTEMPTS'>,
): DeliveryState {
  return {
    attempts: email.attempts,
    max_attempts: config.POSTLANE_SEND_MAX_ATTEMPTS,
    last_error: email.lastError ?? null,
    next_attempt_at: email.status === 'queued' ? email.sendAfter.toISOString() : null,
  };
}

/** The status an operator reads: `retrying` and `scheduled` are queued emails with a story. */
export function displayStatus(email: Pick<IEmail, 'status' | 'attempts' | 'lastEvent'>): string {
  if (email.status === 'queued' && email.attempts > 0) return 'retrying';
  if (email.status === 'queued' && email.lastEvent === 'scheduled') return 'scheduled';
  return email.status;
}

export interface EmailDelivery {
  email: IEmail;
  state: DeliveryState;
  recipients: Pick<IEmailRecipient, 'kind' | 'address' | 'status' | 'response'>[];
  /** The email's events, oldest first. */
  events: { id: string; type: string; at: Date; detail: string | null }[];
  /** The webhook deliveries of those events, oldest first. */
  webhookDeliveries: {
    id: string;
    endpointId: string;
    endpoint: string;
    type: string;
    status: string;
    attempts: number;
    lastStatusCode: number | null;
    lastError: string | null;
    createdAt: Date;
  }[];
}

/** `<id@host>` or `id@host`: a Message-ID as the header carries it or as it was copied. */
const asMessageId = (text: string) => (text.startsWith('<') ? text : `<${text}>`);

/** An email of the team by its id or its Message-ID; another team's reads exactly like a missing one. */
export async function findEmail(deps: Pick<Deps, 'orm'>, teamId: string, idOrMessageId: string): Promise<IEmail> {
  const email = isUuid(idOrMessageId)
    ? await deps.orm.em.findOne(Email, { id: idOrMessageId, team: teamId })
    : await deps.orm.em.findOne(Email, { messageId: asMessageId(idOrMessageId.trim()), team: teamId });
  if (!email) throw notFound('Email');
  return email;
}

/** What the bounce, complaint or failure event says, in a line. */
function eventDetail(payload: Record<string, unknown>): string | null {
  const data = (payload.data ?? payload) as Record<string, unknown>;
  const bounce = (data.bounce ?? data.delay) as { message?: string; class?: string } | undefined;
  // The bounce or deferral class, where the reply was classified (direct delivery, bounce reports), before the reply itself.
  if (bounce?.message) return bounce.class ? `${bounce.class}: ${bounce.message}` : bounce.message;
  if (typeof data.error === 'string') return data.error;
  return null;
}

/**
 * One email as an operator looks into it: envelope and status, the attempts and last error, the
 * next attempt, each recipient's verdict, the event timeline and the webhook deliveries of those
 * events (`postlane emails show`).
 */
export async function getEmailDelivery(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  idOrMessageId: string,
): Promise<EmailDelivery> {
  const email = await findEmail(deps, teamId, idOrMessageId);
  const em = deps.orm.em;
  const [recipients, events] = await Promise.all([
    em.find(EmailRecipient, { email: email.id }, { orderBy: { kind: 'asc', address: 'asc' } }),
    em.find(Event, { email: email.id, team: teamId }, { orderBy: { createdAt: 'asc', id: 'asc' } }),
  ]);
  const deliveries =
    events.length === 0
      ? []
      : await em.find(
          WebhookDelivery,
          { event: { $in: events.map((e) => e.id) }, team: teamId },
          { populate: ['endpoint'], orderBy: { createdAt: 'asc', id: 'asc' }, exclude: ['body'] },
        );
  return {
    email,
    state: deliveryState(email, deps.config),
    recipients: recipients.map(({ kind, address, status, response }) => ({ kind, address, status, response })),
    events: events.map((e) => ({ id: e.id, type: e.type, at: e.createdAt, detail: eventDetail(e.payload) })),
    webhookDeliveries: deliveries.map((d) => ({
      id: d.id,
      endpointId: d.endpoint.id,
      endpoint: d.endpoint.url,
      type: d.type,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.lastStatusCode ?? null,
      lastError: d.lastError ?? null,
      createdAt: d.createdAt,
    })),
  };
}
