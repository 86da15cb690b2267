import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { validationError } from '../../errors.js';
import { normalizeDomainName } from '../domains/domain-name.js';
import { emitFailed, type FailedRow } from '../outbox/drain-outbox.js';
import { type DeferredTo, deferredTo } from './deferred-mail.js';
import { isKnownGroup, queueWord } from './queue-target.js';

export const PURGE_REASON = 'purged by operator';
/** Emails failed per transaction: a large backlog is purged in steps, each complete on its own. */
const PURGE_BATCH = 500;

/** What `postlane queue purge` did. */
export interface QueuePurge {
  matched: 'group' | 'domain';
  group: string | null;
  domain: string | null;
  reason: string;
  /** Deferred emails failed. */
  emails: number;
}

/**
 * A batch of the deferred mail, failed as an attempt refused for good fails it: `failed` with the
 * reason as its last error, `last_event` too unless a recipient had accepted it, the recipients
 * still owed rejected with the reason. Rows being sent right now are skipped (SKIP LOCKED, and
 * their claim made them `sending`): their attempt settles them.
 */
const purgeBatch = (to: DeferredTo) => `
  WITH picked AS (
    SELECT e.id, e.created_at FROM email e WHERE ${deferredTo(to)} LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED
  ), purged AS (
    UPDATE email e
       SET status = 'failed', last_error = ?, lease_expires_at = NULL, deferred_domains = NULL, deferred_groups = NULL,
           last_event = CASE WHEN e.sent_at IS NULL THEN 'failed' ELSE e.last_event END,
           last_event_at = CASE WHEN e.sent_at IS NULL THEN ?::timestamptz ELSE e.last_event_at END,
           updated_at = now()
      FROM picked p WHERE e.id = p.id AND e.created_at = p.created_at
    RETURNING e.id, e.team_id, e.created_at, e."from", e."to", e.subject, e.message_id, e.broadcast_id, e.tags, e.region
  ), unreached AS (
    UPDATE email_recipient r SET status = 'rejected', response = ?
      FROM purged x WHERE r.email_id = x.id AND r.created_at = x.created_at AND r.status = 'pending'
  )
  SELECT * FROM purged`;

/**
 * Fails the deferred mail of a recipient domain, or of an MX group when the word is a group key
 * the shaper knows, each email announced by `email.failed` with the reason, as a failed attempt
 * is. Found by what the outbox recorded at the deferral, so no DNS is asked: a domain whose DNS is
 * broken can be purged. An email deferred for another domain as well fails as a whole.
 */
export async function purgeQueue(
  deps: { orm: MikroORM; clock: () => Date },
  target: string,
  reason = PURGE_REASON,
): Promise<QueuePurge> {
  const why = reason.trim();
  if (why.length === 0 || why.length > 500) throw validationError('reason: must be 1 to 500 characters');
  const word = queueWord(target);
  const purge: Omit<QueuePurge, 'emails'> = (await isKnownGroup(deps, word))
    ? { matched: 'group', group: word, domain: null, reason: why }
    : { matched: 'domain', group: null, domain: normalizeDomainName(word) ?? word, reason: why };
  const to: DeferredTo = purge.group
    ? { column: 'deferred_groups', value: purge.group }
    : { column: 'deferred_domains', value: purge.domain! };
  const sql = purgeBatch(to);
  let emails = 0;
  // Each batch takes rows out of the match, so the loop ends; SKIP LOCKED never waits on a claim.
  for (;;) {
    const failed = await deps.orm.em.fork().transactional(async (tx) => {
      const at = deps.clock();
      const rows = await sqlQuery<FailedRow>(tx, sql, [to.value, why, at, why]);
      await emitFailed(tx, rows, at, why);
      return rows.length;
    });
    emails += failed;
    if (failed < PURGE_BATCH) return { ...purge, emails };
  }
}
