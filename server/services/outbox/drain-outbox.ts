import type { Address, OutboundMessage } from '../../mail/outbound-message.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../../config/index.js';
import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { splitFormatted } from '../../mail/address.js';
import { ReturnPaths } from '../inbound/return-path.js';
import {
  type BatchOutcome,
  type EmailProvider,
  type OnOutcome,
  ProviderError,
  sendBatch,
} from '../../providers/index.js';
import { type FromDomainSettings, senderDomainsForEmails } from '../domains/dkim-key.js';
import { withTracking } from '../tracking/tracking-settings.js';
import type { QueuedEmailRow } from './queued-email-writer.js';
import { emitEmailEvents } from '../emails/record-email-event.js';
import type { ClaimedEmail, OwedRecipient } from './claimed-email.js';
import { SettleQueue } from './settle-sends.js';

/** Claims in flight per drain run: while one batch is with the provider, the other is being claimed or settled. */
const LANES = 2;

/**
 * A run claims until the lock lifetime less one lease has passed; a batch claimed just before
 * then is sent within 80% of the lease and settled, so the run ends inside its job lock.
 */
export const drainClaimingMs = (config: Config) =>
  (config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS - config.POSTLANE_SEND_LEASE_SECONDS) * 1000;

/** The provider's deadline for a batch, from just after its claim: well inside the lease, so no other worker can have taken a row yet. */
const sendTimeoutMs = (config: Config) => Math.floor(config.POSTLANE_SEND_LEASE_SECONDS * 1000 * 0.8);

/**
 * Due now by the database's clock (the writer compares against the same clock). Rows are taken
 * in due order with SKIP LOCKED, so any number of runs, in any number of processes, claim disjoint
 * batches; FOR UPDATE rechecks `status` on the latest version of each row it locks, so a claim of
 * a row another run just took is impossible.
 * A batch also ends where its bodies and attachments pass POSTLANE_SEND_BATCH_MB (it always takes
 * its first email): a count alone would let 250 emails of 30 MB each into the worker's memory.
 * Rows locked but not taken are free again when the statement ends. Each row comes back with the
 * recipients still owed a delivery (those accepted or refused for good are not sent again) and
 * whether it has attachments, so a batch is one round trip.
 *
 * The outbox is nearly all settled rows, so the planner may expect one due row, or none: the plan
 * must be cheap whatever it expects. The due rows come off the partial index `email_due_idx` of
 * each day partition, merged in due order with the LIMIT inside (`postlane_due_emails`, in
 * Migration20261220000000_email_partitions), with their body sizes (the row is read to lock it anyway), and everything after
 * is driven by that small set, one index probe per row (attachments and owed recipients by
 * `email_id`, the update by primary key); no join between two sets whose sizes the planner guesses.
 * Each probe also names the email's `created_at`, which its recipients and attachments carry, so
 * it reaches one day partition instead of all of them. The update names the rows by id alone
 * (`due` holds them locked, still queued): a `status` condition there would let the planner drive
 * the update from `email_due_idx` on a stale estimate of one row and probe the batch for each of
 * 100k due rows.
 */
const CLAIM_SQL = `
  WITH due AS MATERIALIZED (SELECT * FROM postlane_due_emails(?, ?::uuid[], ?)),
  sized AS MATERIALIZED (
    SELECT d.id, d.created_at, t.size IS NOT NULL AS has_attachments,
           row_number() OVER running AS n,
           sum(d.body + coalesce(t.size, 0)) OVER running AS held
      FROM due d
      LEFT JOIN LATERAL (SELECT sum(a.size) AS size FROM email_attachment a WHERE a.email_id = d.id AND a.created_at = d.created_at HAVING count(*) > 0) t ON true
    WINDOW running AS (ORDER BY d.send_after, d.id)),
  claimed AS (
    UPDATE email e SET status = 'sending', lease_expires_at = now() + make_interval(secs => ?), attempts = attempts + 1, updated_at = now()
      FROM sized s WHERE e.id = s.id AND e.created_at = s.created_at AND (s.n = 1 OR s.held <= ?)
    RETURNING e.id, e.team_id, e.created_at, e."from", e."to", e.cc, e.bcc, e.reply_to, e.subject, e.html, e.text, e.headers, e.tags,
              e.broadcast_id, e.region, e.message_id, e.attempts, e.sent_at, e.last_error, e.raw_mime, s.has_attachments)
  SELECT c.*, coalesce(o.owed, '[]') AS owed
    FROM claimed c
    LEFT JOIN LATERAL (SELECT json_agg(json_build_object('id', r.id, 'address', r.address, 'response', r.response)) AS owed
                         FROM email_recipient r WHERE r.email_id = c.id AND r.created_at = c.created_at AND r.status = 'pending') o ON true`;

/** The claim of one batch as SQL and bindings: what `deliverDue` runs, and what the growth benchmark times and explains. */
export function claimStatement(
  config: Config,
  region: string,
  only?: readonly string[],
): { sql: string; bindings: unknown[] } {
  const bindings = [
    region,
    only ? `{${only.join(',')}}` : null,
    config.POSTLANE_SEND_BATCH_SIZE,
    config.POSTLANE_SEND_LEASE_SECONDS,
    config.POSTLANE_SEND_BATCH_MB * 1024 * 1024,
  ];
  return { sql: CLAIM_SQL, bindings };
}

/** The columns the claim returns: those the writer wrote, and what sending has added since. */
interface ClaimedRow extends Pick<
  QueuedEmailRow,
  | 'id'
  | 'team_id'
  | 'from'
  | 'to'
  | 'cc'
  | 'bcc'
  | 'reply_to'
  | 'subject'
  | 'html'
  | 'text'
  | 'headers'
  | 'tags'
  | 'region'
  | 'message_id'
> {
  created_at: Date | string;
  broadcast_id: string | null;
  attempts: number;
  sent_at: Date | string | null;
  last_error: string | null;
  raw_mime: Buffer | null;
  owed: OwedRecipient[];
  has_attachments: boolean;
}

/**
 * One drain run for a region: lanes claim batches of due emails, hand them to the provider and
 * settle them, until nothing is due, the run's time is up, or the worker is stopping. Then it
 * hands over to a fresh run, or books one for the next email due.
 */
export async function drainOutbox(deps: Deps, region: string): Promise<void> {
  // Throws before claiming anything when no provider serves the region (a configuration error).
  deps.providers.forRegion(region);
  await releaseExpiredLeases(deps, region);
  const claimUntil = Date.now() + drainClaimingMs(deps.config);
  let handOver = false;
  const lane = async () => {
    for (;;) {
      if (deps.jobs.stopping.aborted || Date.now() >= claimUntil) {
        handOver = true;
        return;
      }
      if ((await deliverDue(deps, region)) === 0) return;
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  if (handOver) return wakeDrain(deps, region, new Date());
  await scheduleNextDrain(deps, region);
}

/**
 * A worker that died holding a claim leaves its rows `sending`; once the lease has run out they
 * are queued again, to be claimed (and their attempt counted) like any due email, unless that was
 * their last attempt: those fail (`email.failed`), so an email that kills its worker (or any
 * failure before an outcome is written) cannot be claimed past POSTLANE_SEND_MAX_ATTEMPTS. A run
 * that merely outlived its lease then finds its claim gone when it settles, and writes nothing.
 */
export async function releaseExpiredLeases(
  deps: Pick<Deps, 'orm' | 'config' | 'logger' | 'metrics' | 'clock'>,
  region: string,
): Promise<number> {
  const error = `its worker stopped during the last of its ${deps.config.POSTLANE_SEND_MAX_ATTEMPTS} attempts, before any outcome was recorded`;
  return deps.orm.em.fork().transactional(async (tx) => {
    const rows = await sqlQuery<ReleasedRow>(tx, RELEASE_EXPIRED, [
      deps.config.POSTLANE_SEND_MAX_ATTEMPTS,
      error,
      region,
    ]);
    const ended = rows.filter((row) => row.status === 'failed');
    await emitFailed(tx, ended, deps.clock(), error);
    for (const row of ended) {
      deps.metrics.sendAttempts.inc({ region, outcome: 'failed' });
      deps.logger.warn(
        { emailId: row.id, attempt: row.attempts, outcome: 'failed', err: error },
        'send failed permanently',
      );
    }
    return rows.length;
  });
}

const RELEASE_EXPIRED = `
  WITH cap AS (SELECT ?::int AS attempts, ?::text AS error),
  released AS (
    UPDATE email e
       SET status = CASE WHEN e.attempts >= cap.attempts THEN 'failed' ELSE 'queued' END,
           last_error = CASE WHEN e.attempts >= cap.attempts THEN cap.error ELSE e.last_error END,
           last_event = CASE WHEN e.attempts >= cap.attempts AND e.sent_at IS NULL THEN 'failed' ELSE e.last_event END,
           last_event_at = CASE WHEN e.attempts >= cap.attempts AND e.sent_at IS NULL THEN now() ELSE e.last_event_at END,
           lease_expires_at = NULL, updated_at = now()
      FROM cap
     WHERE e.status = 'sending' AND e.region = ? AND e.lease_expires_at < now()
    RETURNING e.id, e.status, e.attempts, e.team_id, e.created_at, e."from", e."to", e.subject, e.message_id, e.broadcast_id, e.tags, e.region
  ), unreached AS (
    UPDATE email_recipient r SET status = 'rejected' FROM released x WHERE r.email_id = x.id AND x.status = 'failed' AND r.status = 'pending'
  )
  SELECT * FROM released`;

/** An outbox row a statement failed, with what its `email.failed` event says of it. */
export interface FailedRow extends Pick<
  QueuedEmailRow,
  'id' | 'team_id' | 'from' | 'to' | 'subject' | 'tags' | 'region' | 'message_id'
> {
  created_at: Date | string;
  broadcast_id: string | null;
}

interface ReleasedRow extends FailedRow {
  status: 'queued' | 'failed';
  attempts: number;
}

/**
 * `email.failed` for rows failed by a statement of their own rather than by settling an attempt,
 * in that statement's transaction, as settling announces one: the reason as `error`.
 */
export function emitFailed(tx: EntityManager, rows: readonly FailedRow[], at: Date, error: string) {
  return emitEmailEvents(
    tx,
    rows.map((row) => ({
      email: {
        ...row,
        team: { id: row.team_id },
        createdAt: new Date(row.created_at),
        messageId: row.message_id,
        broadcastId: row.broadcast_id,
      },
      type: 'email.failed',
      at,
      extra: { error },
    })),
  );
}

/**
 * Claims up to POSTLANE_SEND_BATCH_SIZE due emails of the region, and POSTLANE_SEND_BATCH_MB
 * (only those in `only`, when given), sends them as one batch and settles them. Returns how many
 * it claimed.
 */
export async function deliverDue(deps: Deps, region: string, only?: readonly string[]): Promise<number> {
  const provider = deps.providers.forRegion(region);
  const em = deps.orm.em.fork();
  const { config } = deps;
  const claim = claimStatement(config, region, only);
  const rows = await sqlQuery<ClaimedRow>(em, claim.sql, claim.bindings, only ? undefined : 'postlane_claim_emails');
  if (rows.length === 0) return 0;
  const [attachments, senders, pools] = await Promise.all([
    attachmentsOf(em, rows),
    senderDomainsForEmails(
      deps,
      rows.map((row) => ({ team: { id: row.team_id }, from: row.from })),
    ),
    provider.usesIpPools ? teamIpPools(em, rows) : new Map<string, string>(),
  ]);
  const emails = rows.map((row) => toClaimedEmail(row, attachments.get(row.id) ?? []));

  if (config.POSTLANE_TEST_SEND_DELAY_MS > 0) await sleep(config.POSTLANE_TEST_SEND_DELAY_MS);
  const signal = AbortSignal.timeout(sendTimeoutMs(config));

  // Each outcome is written a few milliseconds after the provider gives it, not at the end of the batch.
  const settle = new SettleQueue(deps, em, provider);
  await sendClaimed(deps, provider, emails, senders, pools, signal, (at, outcome) => settle.add(emails[at]!, outcome));
  await settle.close();
  return rows.length;
}

function toClaimedEmail(row: ClaimedRow, attachments: ClaimedEmail['attachments']): ClaimedEmail {
  return {
    id: row.id,
    team: { id: row.team_id },
    createdAt: new Date(row.created_at),
    from: row.from,
    to: row.to,
    cc: row.cc,
    bcc: row.bcc,
    replyTo: row.reply_to,
    subject: row.subject,
    html: row.html,
    text: row.text,
    headers: row.headers,
    tags: row.tags,
    broadcastId: row.broadcast_id,
    region: row.region,
    messageId: row.message_id,
    attempts: row.attempts,
    sentAt: row.sent_at == null ? null : new Date(row.sent_at),
    lastError: row.last_error,
    rawMime: row.raw_mime,
    owed: row.owed,
    attachments,
  };
}

/** The attachments of the claimed emails that have any, by email, in their order. */
async function attachmentsOf(em: EntityManager, rows: ClaimedRow[]): Promise<Map<string, ClaimedEmail['attachments']>> {
  const by = new Map<string, ClaimedEmail['attachments']>();
  const ids = rows.filter((row) => row.has_attachments).map((row) => row.id);
  if (ids.length === 0) return by;
  const attachments = await sqlQuery<{
    email_id: string;
    filename: string;
    content_type: string | null;
    content: Buffer;
  }>(
    em,
    'SELECT email_id, filename, content_type, content FROM email_attachment WHERE email_id = ANY(?::uuid[]) ORDER BY email_id, position',
    [`{${ids.join(',')}}`],
  );
  for (const { email_id, filename, content_type, content } of attachments) {
    const list = by.get(email_id) ?? [];
    if (list.length === 0) by.set(email_id, list);
    list.push({ filename, contentType: content_type, content });
  }
  return by;
}

/** The IP pool of each team of the batch pinned to one, by team id: asked only of a provider with pools. */
async function teamIpPools(em: EntityManager, rows: ClaimedRow[]): Promise<Map<string, string>> {
  const teams = [...new Set(rows.map((row) => row.team_id))];
  const pinned = await sqlQuery<{ id: string; ip_pool: string }>(
    em,
    'SELECT id, ip_pool FROM team WHERE id = ANY(?::uuid[]) AND ip_pool IS NOT NULL',
    [`{${teams.join(',')}}`],
  );
  return new Map(pinned.map((team) => [team.id, team.ip_pool]));
}

/**
 * Builds each message and hands those with recipients owed to the provider as one batch, reporting
 * each email's outcome as soon as it is known. An email with nobody owed (all settled by an earlier
 * attempt) goes nowhere and settles as it is; one that cannot be built (its sender domain's key
 * does not open, a stored address does not split) fails alone, and the rest of the batch goes.
 */
async function sendClaimed(
  deps: Pick<Deps, 'config' | 'secrets' | 'logger'>,
  provider: EmailProvider,
  emails: ClaimedEmail[],
  senders: FromDomainSettings[],
  pools: ReadonlyMap<string, string>,
  signal: AbortSignal,
  onOutcome: OnOutcome,
): Promise<void> {
  const messages: OutboundMessage[] = [];
  const positions: number[] = [];
  // Outcomes known before sending; their writes are awaited with the batch's.
  const early: Promise<void>[] = [];
  // Called as an async function so that a synchronous throw becomes a rejection awaited below.
  const report = (at: number, outcome: BatchOutcome) => void early.push((async () => onOutcome(at, outcome))());
  const returnPaths = provider.takesReturnPath ? ReturnPaths.from(deps) : null;
  emails.forEach((email, at) => {
    const sender = senders[at]!;
    if (email.owed.length === 0) return report(at, { providerMessageId: '', recipients: [] });
    if (sender.unusable) {
      // Transient: restoring the key lets the retries through; the attempts cap ends the email otherwise.
      deps.logger.warn(
        { emailId: email.id, attempt: email.attempts, err: sender.unusable },
        'send held back: its sender domain cannot sign',
      );
      return report(at, new ProviderError(sender.unusable, true));
    }
    try {
      const message = {
        ...toOutboundMessage(
          email,
          email.owed.map((r) => r.address),
        ),
        dkim: sender.dkim,
        ipPool: pools.get(email.team.id),
        returnPaths: returnPaths
          ? Object.fromEntries(email.owed.map((r) => [r.address, returnPaths.forRecipient(r.id)]))
          : undefined,
      };
      messages.push(withTracking(deps, message, sender.tracking));
      positions.push(at);
    } catch (err) {
      report(at, err instanceof ProviderError ? err : new ProviderError((err as Error).message, false));
    }
  });
  const reported = new Set<number>();
  try {
    if (messages.length === 0) return;
    await sendBatch(provider, messages, signal, (i, outcome) => {
      reported.add(i);
      return onOutcome(positions[i]!, outcome);
    });
  } catch (err) {
    // The batch as a whole failed (the capture's MIME threads gone): what it did not report is tried again.
    const failure = err instanceof ProviderError ? err : new ProviderError((err as Error).message, true);
    positions.forEach((at, i) => reported.has(i) || report(at, failure));
  } finally {
    await Promise.all(early);
  }
}

/**
 * The one place an outbound message is built from a stored email. Stored addresses are the strict
 * parser's canonical form, so they split into parts without parsing again; the parts go to the provider.
 */
export function toOutboundMessage(
  email: Pick<
    ClaimedEmail,
    | 'id'
    | 'messageId'
    | 'from'
    | 'to'
    | 'cc'
    | 'bcc'
    | 'replyTo'
    | 'subject'
    | 'html'
    | 'text'
    | 'headers'
    | 'attachments'
    | 'rawMime'
  >,
  envelopeTo: string[],
): OutboundMessage {
  const parts = (formatted: string): Address => {
    const mailbox = splitFormatted(formatted);
    // Not the address itself: this message is logged.
    if (!mailbox) throw new ProviderError('a stored address is not in the form Postlane stores addresses in', false);
    return mailbox;
  };
  return {
    emailId: email.id,
    messageId: email.messageId,
    from: parts(email.from),
    to: email.to.map(parts),
    cc: email.cc.map(parts),
    bcc: email.bcc.map(parts),
    replyTo: email.replyTo.map(parts),
    envelopeTo,
    subject: email.subject,
    html: email.html ?? null,
    text: email.text ?? null,
    headers: email.headers,
    attachments: email.attachments,
    ...(email.rawMime ? { raw: email.rawMime } : {}),
  };
}

/**
 * Books a run for when the region next has work: its earliest queued email (scheduled, parked or
 * retrying; or one committed while this run was finishing), or the end of a lease another run holds,
 * in case that run dies. Skipped when a run at or before then is already waiting.
 */
export async function scheduleNextDrain(deps: Pick<Deps, 'orm' | 'jobs' | 'logger'>, region: string): Promise<void> {
  const em = deps.orm.em.fork();
  const [row] = await sqlQuery<{ due_at: string | null }>(
    em,
    `SELECT least((SELECT min(send_after) FROM email WHERE status = 'queued' AND region = ?),
                  (SELECT min(lease_expires_at) FROM email WHERE status = 'sending' AND region = ?)) AS due_at`,
    [region, region],
  );
  if (row?.due_at) await wakeDrain(deps, region, new Date(row.due_at));
}

/**
 * A drain run for the region at `at` (now when past), unless one at or before then is already
 * waiting. Written as a job row directly, as the outbox writer does: Agenda would start a due job
 * in this very process, even one that is shutting down.
 */
export async function wakeDrain(deps: Pick<Deps, 'orm' | 'jobs' | 'logger'>, region: string, at: Date): Promise<void> {
  try {
    const booked = await sqlQuery(deps.orm.em.fork(), BOOK_DRAIN, [at, region, region, at]);
    if (booked.length > 0 && at.getTime() <= Date.now() && !deps.jobs.stopping.aborted) deps.jobs.wake('email.drain');
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, region }, 'could not book a drain run; the outbox sweep will');
  }
}

const BOOK_DRAIN = `
  INSERT INTO agenda_jobs (name, priority, type, next_run_at, data)
  SELECT 'email.drain', 0, 'normal', greatest(?::timestamptz, now()), jsonb_build_object('region', ?::text)
   WHERE NOT EXISTS (SELECT 1 FROM agenda_jobs WHERE name = 'email.drain' AND data->>'region' = ? AND locked_at IS NULL AND next_run_at <= ?)
  RETURNING id`;
