import type { Deps } from '../../deps.js';
import { ApiError, concurrentIdempotentRequests, invalidIdempotentRequest } from '../../errors.js';
import type { IdempotencyClaim } from '../emails/send-input.js';
import { IdempotencyKeyTaken } from '../outbox/queued-email-writer.js';

/**
 * What an idempotent send that failed with `err` answers instead (reliability-notes §3): the
 * stored answer when the same request already holds the key, 409 when another request does or
 * it is still being committed, and the send's own refusal when no key is stored (a replay must
 * not be refused because the suppression list or quota changed since, so the stored row is read first).
 */
export async function storedAnswer(
  deps: Pick<Deps, 'idempotencyKeys'>,
  claim: IdempotencyClaim,
  err: unknown,
): Promise<{ statusCode: number; response: unknown }> {
  if (!(err instanceof IdempotencyKeyTaken || err instanceof ApiError)) throw err;
  const stored = await deps.idempotencyKeys.read(claim.teamId, claim.key);
  // A refusal with no stored key is this request's own answer.
  if (!stored && err instanceof ApiError) throw err;
  if (!stored) throw concurrentIdempotentRequests();
  if (!Buffer.from(stored.request_hash).equals(claim.requestHash)) throw invalidIdempotentRequest();
  if (stored.state !== 'done') throw concurrentIdempotentRequests();
  return { statusCode: stored.status_code, response: stored.response };
}
