import { setTimeout as sleep } from 'node:timers/promises';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { Broadcast, type IBroadcast, type SegmentFilter } from '../../entities/index.js';
import { ApiError } from '../../errors.js';
import { parseMailbox, type Mailbox } from '../../mail/address.js';
import { loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { broadcastRefusal } from '../deliverability/broadcast-refusal.js';
import { domainOfAddress } from '../domains/domain-name.js';
import { admitSends } from '../emails/admit-sends.js';
import type { QueuedEmailRow } from '../outbox/queued-email-writer.js';
import type { AdmittedEmail, SendEmailInput } from '../emails/send-input.js';
import { toQueuedRow } from '../emails/send-email.js';
import { segmentMembership } from '../segments/segment-filter.js';
import { nextUtcDay, nextUtcMonth } from '../usage/periods.js';
import { withTeamQuota } from '../usage/team-quota.js';
import { type BroadcastContact, broadcastRenderer } from './broadcast-content.js';
import { regionRate } from './broadcast-capacity.js';
import { broadcastRegion } from './save-broadcast.js';

/** Emails are written at most this far ahead of their paced send time, so a cancel catches most of the audience unwritten. */
const LOOKAHEAD_MS = 30_000;
/** How often a broadcast waiting for its turn, or for its last emails, looks again. */
const POLL_MS = 5_000;
/** While the provider throttles (emails of this broadcast are waiting to retry), the pace halves this often. */
const THROTTLE_BACKOFF_MS = 60_000;
/** Contacts rendered and written per statement within a batch (the batch stays one transaction and one cursor move). */
const WRITE_SLICE = 250;
/** One job run does this much work, then hands over to a fresh run so other jobs get their turn. */
const RUN_BUDGET_MS = 20_000;

/**
 * Works a broadcast forward: start it when due and its region is free, write its contacts as
 * emails batch by batch at the region's pace, and mark it `sent` once all are walked and none of
 * its emails is still waiting. Every step is one transaction holding the broadcast's row, so two
 * workers never walk the same contacts and a crash loses at most an uncommitted batch.
 */
export async function runBroadcast(deps: Deps, broadcastId: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const next = await step(deps, broadcastId);
    if (next === null) return;
    if (next.getTime() > deps.clock().getTime() || Date.now() - started > RUN_BUDGET_MS) {
      await enqueueBroadcast(deps, broadcastId, next);
      return;
    }
  }
}

export async function enqueueBroadcast(
  deps: Pick<Deps, 'jobs' | 'logger'>,
  broadcastId: string,
  at?: Date,
): Promise<void> {
  try {
    await deps.jobs.enqueue('broadcast.send', { broadcastId }, at);
  } catch (err) {
    deps.logger.warn(
      { err: (err as Error).message, broadcastId },
      'enqueue failed; the outbox sweeper will pick the broadcast up',
    );
  }
}

/** One step under the broadcast's row lock; the time of the next step, or null when there is nothing more to do here. */
async function step(deps: Deps, broadcastId: string): Promise<Date | null> {
  const teamId = await teamOf(deps, broadcastId);
  if (!teamId) return null;
  try {
    return await withTeamQuota(deps, teamId, (admit) =>
      deps.orm.em.transactional(async (em) => {
        // SKIP LOCKED: another worker is on it; when that one dies, its job (or the sweeper) brings the broadcast back.
        const [row] = await sqlQuery<Record<string, unknown>>(
          em,
          `SELECT * FROM broadcast WHERE id = ? AND status IN ('scheduled', 'queued', 'sending') FOR UPDATE SKIP LOCKED`,
          [broadcastId],
        );
        if (!row) return null;
        const broadcast = em.map(Broadcast, row);
        const now = deps.clock();
        if (broadcast.status === 'scheduled') {
          if (broadcast.scheduledAt && broadcast.scheduledAt > now) return broadcast.scheduledAt;
          broadcast.status = 'queued';
        }
        if (broadcast.status === 'queued')
          return broadcast.nextBatchAt && broadcast.nextBatchAt > now
            ? broadcast.nextBatchAt
            : start(deps, broadcast, now);
        const refusal = await senderRefusal(deps, broadcast);
        if (refusal) return stopRefused(deps, broadcast, refusal);
        if (!broadcast.expanded) return expandBatch(deps, broadcast, now, admit);
        return finishWhenSettled(deps, broadcast, now);
      }),
    );
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return park(deps, broadcastId, err);
  }
}

/** Null once the broadcast is deleted. */
async function teamOf(deps: Deps, broadcastId: string): Promise<string | null> {
  const [row] = await sqlQuery<{ team_id: string }>(deps.orm.em, 'SELECT team_id FROM broadcast WHERE id = ?', [
    broadcastId,
  ]);
  return row?.team_id ?? null;
}

/**
 * Refusals of the whole team's sending wait rather than fail: a monthly quota without overage
 * until renewal, a full daily backlog until midnight UTC, a sending pause (the team's, or its
 * region's for broadcasts) until it clears, looked at again as often as the rates are judged.
 * The cursor stays where it was, so the broadcast resumes with the next contact.
 */
async function park(deps: Deps, broadcastId: string, err: ApiError): Promise<Date> {
  const now = deps.clock();
  const until =
    err.name === 'monthly_quota_exceeded'
      ? nextUtcMonth(now)
      : err.name === 'daily_quota_exceeded'
        ? nextUtcDay(now)
        : err.name === 'sending_paused' || err.name === 'broadcasts_paused'
          ? new Date(now.getTime() + deps.config.POSTLANE_DELIVERABILITY_CHECK_SECONDS * 1000)
          : new Date(now.getTime() + 15 * 60_000);
  // Back in the queue, where a broadcast waiting for a time of its own holds up no one else in the region.
  await deps.orm.em.nativeUpdate(
    Broadcast,
    { id: broadcastId, status: { $in: ['queued', 'sending'] } },
    { status: 'queued', nextBatchAt: until },
  );
  deps.logger.info({ broadcastId, reason: err.name, until }, 'broadcast parked');
  return until;
}

/** One broadcast sends per region at a time, oldest first; the region lock makes "is it free?" and "take it" one step. */
async function start(deps: Deps, broadcast: IBroadcast, now: Date): Promise<Date | null> {
  const em = deps.orm.em;
  await sqlQuery(em, 'SELECT pg_advisory_xact_lock(hashtext(?))', [`broadcast-region:${broadcast.region}`]);
  const [busy] = await sqlQuery<{ id: string }>(
    em,
    `SELECT id FROM broadcast WHERE region = ? AND id <> ?
        AND ((status = 'sending' AND NOT expanded) OR (status = 'queued' AND sent_at < ? AND coalesce(next_batch_at, '-infinity') <= now()))
      LIMIT 1`,
    [broadcast.region, broadcast.id, broadcast.sentAt ?? now],
  );
  if (busy) {
    await em.flush();
    return new Date(now.getTime() + POLL_MS);
  }
  broadcast.status = 'sending';
  broadcast.pacePerSecond = regionRate(deps.config, broadcast.region);
  broadcast.nextBatchAt = now;
  await em.flush();
  deps.logger.info({ broadcastId: broadcast.id, audience: broadcast.audienceSize }, 'broadcast started');
  return now;
}

async function expandBatch(
  deps: Deps,
  broadcast: IBroadcast,
  now: Date,
  admit: (count: number) => Promise<Date | null>,
): Promise<Date | null> {
  const em = deps.orm.em;
  // Paused (the team, or the region's broadcasts): this batch rolls back and the broadcast parks.
  const refusal = await broadcastRefusal(em, broadcast.team.id, broadcast.region);
  if (refusal) throw refusal;
  const slotStart = new Date(Math.max(now.getTime(), broadcast.nextBatchAt?.getTime() ?? 0));
  if (slotStart.getTime() - now.getTime() > LOOKAHEAD_MS) return new Date(slotStart.getTime() - LOOKAHEAD_MS);

  const rate = regionRate(deps.config, broadcast.region);
  // Pushed back by the provider, which recorded why: emails whose lease merely ran out (their worker
  // died holding them) are back in the queue untried, and say nothing about the provider.
  const [retrying] = await sqlQuery<{ n: number }>(
    em,
    `SELECT count(*)::int AS n FROM email WHERE broadcast_id = ? AND status = 'queued' AND attempts > 0 AND last_error IS NOT NULL`,
    [broadcast.id],
  );
  if (retrying!.n > 0) {
    // The provider is pushing back: halve the pace and give the retries room before writing more.
    broadcast.pacePerSecond = Math.max(1, Math.floor((broadcast.pacePerSecond ?? rate) / 2));
    broadcast.nextBatchAt = new Date(now.getTime() + THROTTLE_BACKOFF_MS);
    await em.flush();
    deps.logger.warn(
      { broadcastId: broadcast.id, retrying: retrying!.n, pace: broadcast.pacePerSecond },
      'provider throttling; broadcast slowed',
    );
    return broadcast.nextBatchAt;
  }
  const pace = Math.min(rate, Math.ceil((broadcast.pacePerSecond ?? rate) * 1.25));

  const contacts = await batchOfContacts(deps, broadcast);
  if (contacts.length === 0) {
    broadcast.expanded = true;
    await em.flush();
    await wakeNextInRegion(deps, broadcast.region);
    return finishWhenSettled(deps, broadcast, now);
  }

  const writeSlice = await sliceWriter(deps, broadcast, admit, slotStart, pace);
  if (deps.config.POSTLANE_TEST_SEND_DELAY_MS > 0) await sleep(deps.config.POSTLANE_TEST_SEND_DELAY_MS);
  let written = 0;
  for (let at = 0; at < contacts.length; at += WRITE_SLICE)
    written += await writeSlice(contacts.slice(at, at + WRITE_SLICE), written);

  broadcast.cursor = contacts.at(-1)!.id;
  broadcast.expandedCount += contacts.length;
  broadcast.skippedCount += contacts.length - written;
  broadcast.pacePerSecond = pace;
  broadcast.nextBatchAt = new Date(slotStart.getTime() + (written / pace) * 1000);
  await em.flush();
  return new Date(Math.max(now.getTime(), broadcast.nextBatchAt.getTime() - LOOKAHEAD_MS));
}

/**
 * The `from` rule again, for the team as a whole (the key that sent it may be gone): null while the
 * broadcast may go on. A domain now answering another region counts as a refusal too: the region's
 * queue and pace were settled at send.
 */
async function senderRefusal(deps: Deps, broadcast: IBroadcast): Promise<string | null> {
  try {
    const region = await broadcastRegion(deps, { teamId: broadcast.team.id, domainId: null }, broadcast.from);
    return region === broadcast.region
      ? null
      : `The ${domainOfAddress((parseMailbox(broadcast.from) as Mailbox).address)} domain now sends from region ${region}, not ${broadcast.region}.`;
  } catch (err) {
    if (err instanceof ApiError) return err.message;
    throw err;
  }
}

/** Its domain was removed or lost its verification since the send: the broadcast stops as a cancel would. */
async function stopRefused(deps: Deps, broadcast: IBroadcast, reason: string): Promise<null> {
  const canceled = await cancelWaiting(deps, broadcast);
  await deps.orm.em.flush();
  deps.logger.warn(
    { broadcastId: broadcast.id, reason, canceled },
    'broadcast stopped: its from address may no longer send',
  );
  return null;
}

/**
 * Ends a broadcast that has not finished: its emails still waiting are canceled, contacts not yet
 * walked are never written. Answers how many emails will now not go out. The caller flushes.
 */
export async function cancelWaiting(deps: Pick<Deps, 'orm' | 'clock'>, broadcast: IBroadcast): Promise<number> {
  const canceled = await sqlQuery<{ id: string }>(
    deps.orm.em,
    `UPDATE email SET status = 'canceled', last_event = 'canceled', updated_at = now() WHERE broadcast_id = ? AND status = 'queued' RETURNING id`,
    [broadcast.id],
  );
  const unwalked = broadcast.expanded ? 0 : Math.max(0, (broadcast.audienceSize ?? 0) - broadcast.expandedCount);
  Object.assign(broadcast, { status: 'canceled', canceledAt: deps.clock(), nextBatchAt: null });
  return unwalked + canceled.length;
}

/**
 * Renders, admits and writes a batch's contacts slice by slice, in the batch's transaction, with
 * paced send times running on across slices. Only one slice of rendered emails (and its JSON) is
 * alive at a time: whole batches of them outlived several young-generation collections while
 * their statement ran, were promoted, and grew the worker's heap (docs/benchmarks.md).
 */
async function sliceWriter(
  deps: Deps,
  broadcast: IBroadcast,
  admit: (count: number) => Promise<Date | null>,
  slotStart: Date,
  pace: number,
) {
  const renderer = await broadcastRenderer(deps, broadcast);
  const from = parseMailbox(broadcast.from) as Mailbox;
  const replyTo = broadcast.replyTo.map((address) => parseMailbox(address) as Mailbox);
  const topicId = broadcast.topicId ?? null;
  const teamId = broadcast.team.id;
  /** Writes the slice's reachable contacts, paced on from `offset` emails into the batch; answers how many it wrote. */
  return async (contacts: BroadcastContact[], offset: number): Promise<number> => {
    const inputs: SendEmailInput[] = [];
    for (const contact of contacts) {
      const rendered = contact.unsubscribed ? null : renderer.render(contact);
      if (rendered === null || rendered instanceof ApiError) continue;
      inputs.push({
        from,
        to: [{ name: null, address: contact.email, formatted: contact.email }],
        cc: [],
        bcc: [],
        replyTo,
        subject: rendered.subject,
        html: rendered.html,
        text: rendered.text,
        headers: {},
        attachments: [],
        tags: [],
        scheduledAt: null,
        topicId,
        template: null,
      });
    }
    const sendable = (inputs.length > 0 ? await admitSends(deps, teamId, inputs) : []).filter(
      (input): input is AdmittedEmail => !(input instanceof ApiError),
    );
    if (sendable.length === 0) return 0;
    const parkUntil = await admit(sendable.length);
    const rows: QueuedEmailRow[] = sendable.map((input, index) =>
      Object.assign(toQueuedRow(deps, teamId, input, broadcast.region, parkUntil), {
        broadcast_id: broadcast.id,
        not_before: new Date(slotStart.getTime() + ((offset + index) / pace) * 1000).toISOString(),
      }),
    );
    await deps.emailWriter.writeTogether(rows);
    return rows.length;
  };
}

/** The next contacts of the segment after the cursor, in id order: the walk is stable while contacts come and go. */
async function batchOfContacts(deps: Deps, broadcast: IBroadcast): Promise<BroadcastContact[]> {
  const teamId = broadcast.team.id;
  const [segment] = await sqlQuery<{ id: string; filter: SegmentFilter }>(
    deps.orm.em,
    'SELECT id, filter FROM segment WHERE id = ? AND team_id = ?',
    [broadcast.segmentId, teamId],
  );
  // A segment deleted mid-send has no one left to walk.
  if (!segment) return [];
  const membership = segmentMembership(segment, await loadAudienceCatalog(deps.orm.em, teamId, { segments: false }));
  return sqlQuery<BroadcastContact>(
    deps.orm.em,
    `SELECT c.id, c.email, c.first_name, c.last_name, c.unsubscribed, c.properties FROM contact c
      WHERE c.team_id = ? AND (?::uuid IS NULL OR c.id > ?::uuid) AND ${membership.sql}
      ORDER BY c.id LIMIT ?`,
    [
      teamId,
      broadcast.cursor ?? null,
      broadcast.cursor ?? null,
      ...membership.bindings,
      deps.config.POSTLANE_BROADCAST_BATCH_SIZE,
    ],
  );
}

/** `sent` only once no email of the broadcast is still queued or sending: never finished with mail unsent. */
async function finishWhenSettled(deps: Deps, broadcast: IBroadcast, now: Date): Promise<Date | null> {
  const [pending] = await sqlQuery<{ next: string | null; n: number }>(
    deps.orm.em,
    `SELECT count(*)::int AS n, min(send_after) AS next FROM email WHERE broadcast_id = ? AND status IN ('queued', 'sending')`,
    [broadcast.id],
  );
  if (pending!.n > 0)
    return new Date(Math.max(now.getTime() + POLL_MS, pending!.next ? new Date(pending!.next).getTime() : 0));
  broadcast.status = 'sent';
  broadcast.nextBatchAt = null;
  await deps.orm.em.flush();
  deps.logger.info(
    { broadcastId: broadcast.id, walked: broadcast.expandedCount, skipped: broadcast.skippedCount },
    'broadcast sent',
  );
  return null;
}

async function wakeNextInRegion(deps: Deps, region: string): Promise<void> {
  const [next] = await sqlQuery<{ id: string }>(
    deps.orm.em,
    `SELECT id FROM broadcast WHERE region = ? AND status = 'queued' ORDER BY sent_at LIMIT 1`,
    [region],
  );
  if (next) await enqueueBroadcast(deps, next.id);
}

/**
 * Re-enqueues broadcasts that are due but have no live job (an enqueue lost after a commit, a
 * job row that gave up). Extra runs are harmless: each step takes the row lock.
 */
export async function sweepBroadcasts(deps: Deps): Promise<number> {
  const rows = await sqlQuery<{ id: string }>(
    deps.orm.em,
    `SELECT b.id FROM broadcast b
      WHERE b.status IN ('scheduled', 'queued', 'sending')
        AND coalesce(b.next_batch_at, b.scheduled_at, b.updated_at) < now() - make_interval(secs => ?)
        AND NOT EXISTS (
          SELECT 1 FROM agenda_jobs j
           WHERE j.name = 'broadcast.send' AND j.data->>'broadcastId' = b.id::text
             AND (j.next_run_at IS NOT NULL OR j.locked_at IS NOT NULL))
      LIMIT 100`,
    [deps.config.POSTLANE_SWEEP_AFTER_SECONDS],
  );
  for (const row of rows) await enqueueBroadcast(deps, row.id);
  if (rows.length > 0) deps.logger.info({ count: rows.length }, 'outbox sweeper re-enqueued broadcasts');
  return rows.length;
}
