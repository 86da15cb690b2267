import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { applySesEvent, type SesEvent } from './ses-events.js';
import { invalidNotification, parseSnsMessage, untrustedNotification } from './sns.js';

/** How long an applied MessageId is remembered (maintenance purges older ones); older messages are refused, so none can be replayed. */
export const INGESTED_RETENTION_DAYS = 14;

/**
 * Records a provider notification's id in the caller's transaction; false when it was recorded
 * before (a copy, or a retry of one already applied). A copy arriving at the same moment waits
 * for the first transaction to commit, then finds the id taken.
 */
export async function firstArrival(
  tx: EntityManager,
  source: 'sns' | 'dsn',
  messageId: string,
  topic: string,
): Promise<boolean> {
  const fresh = await sqlQuery(
    tx,
    `INSERT INTO ingested_notification (source, message_id, topic, received_at) VALUES (?, ?, ?, now()) ON CONFLICT DO NOTHING RETURNING message_id`,
    [source, messageId, topic],
  );
  return fresh.length > 0;
}

/**
 * One POST from SNS: verified before anything is read from it, then a subscription to one of our
 * topics is confirmed, and a notification is applied in the same transaction that records its
 * MessageId. That transaction is a handful of short statements (the email, its event, any
 * suppression, and webhook deliveries, which are themselves the outbox), so SNS gets its answer
 * quickly; a copy of the message finds the MessageId taken and changes nothing, even when both
 * copies arrive at once (the second INSERT waits for the first to commit). If applying fails, the
 * MessageId is not kept and SNS's retry applies it.
 */
export async function ingestSnsMessage(deps: Deps, body: string, declaredType?: string): Promise<string> {
  const message = parseSnsMessage(body);
  // SNS sends the type twice, in the body and as x-amz-sns-message-type: they agree or the post is not SNS's.
  if (declaredType !== undefined && declaredType !== message.Type)
    throw invalidNotification('x-amz-sns-message-type does not match the message Type.');
  await deps.sns.verify(message);
  // Signed, so the time is SNS's: far longer ago than SNS ever retries means a replay.
  const sentAt = Date.parse(message.Timestamp);
  if (!(sentAt > deps.clock().getTime() - INGESTED_RETENTION_DAYS * 86_400_000))
    throw untrustedNotification(`The message is more than ${INGESTED_RETENTION_DAYS} days old.`);
  if (message.Type === 'SubscriptionConfirmation') {
    await deps.sns.confirmSubscription(message);
    deps.logger.info({ topic: message.TopicArn }, 'SNS subscription confirmed');
    return 'subscription confirmed';
  }
  if (message.Type === 'UnsubscribeConfirmation') {
    deps.logger.warn(
      { topic: message.TopicArn },
      'SNS topic unsubscribed this endpoint: SES events stop arriving until it is subscribed again',
    );
    return 'unsubscribed';
  }
  return deps.orm.em.fork().transactional(async (tx) => {
    if (!(await firstArrival(tx, 'sns', message.MessageId, message.TopicArn))) return 'duplicate';
    const event = parseEvent(message.Message);
    // Something else published to the topic (the console's test message): nothing to apply.
    return event ? applySesEvent(deps, tx, event) : 'not an SES event';
  });
}

function parseEvent(text: string): SesEvent | null {
  try {
    const event = JSON.parse(text) as unknown;
    return event && typeof event === 'object' && !Array.isArray(event) ? (event as SesEvent) : null;
  } catch {
    return null;
  }
}
