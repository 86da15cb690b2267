import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { conflict } from '../../errors.js';
import type { Sender } from '../domains/authorize-sender.js';
import { loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { broadcastRefusal } from '../deliverability/broadcast-refusal.js';
import { requireSegment } from '../segments/get-segment.js';
import { segmentMembership } from '../segments/segment-filter.js';
import { assertSendable } from './broadcast-content.js';
import { type BroadcastEstimate, estimateBroadcast } from './broadcast-capacity.js';
import { requireBroadcast } from './find-broadcasts.js';
import { cancelWaiting, enqueueBroadcast } from './run-broadcast.js';
import { broadcastRegion } from './save-broadcast.js';

type SendDeps = Pick<Deps, 'orm' | 'config' | 'clock' | 'jobs' | 'logger' | 'providers' | 'senderDomains'>;

/**
 * Sends a draft now or at `scheduledAt`. The audience is counted and the estimate made before
 * anything changes, so a broadcast needing more than 24 days is refused and stays a draft, as is
 * one sent while the team's sending or its region's broadcasts are paused (deliverability). The
 * `from` rule is checked again (a domain may have been removed or lost its verification since the
 * draft was written) and settles the region, whose rate, queue and pause the estimate and refusal
 * use. The state change commits first; the job only wakes a worker (the sweeper covers a lost wake-up).
 */
export async function sendBroadcast(
  deps: SendDeps,
  sender: Sender,
  id: string,
  scheduledAt: Date | null,
): Promise<{ id: string } & BroadcastEstimate> {
  const teamId = sender.teamId;
  const result = await deps.orm.em.transactional(async (em) => {
    const broadcast = await requireBroadcast(deps, teamId, id, true);
    if (broadcast.status !== 'draft')
      throw conflict(`This broadcast is ${broadcast.status}; only a draft can be sent. Duplicate it to send it again.`);
    broadcast.region = await broadcastRegion(deps, sender, broadcast.from);
    const refusal = await broadcastRefusal(em, teamId, broadcast.region);
    if (refusal) throw refusal;
    await assertSendable(deps, broadcast);
    const segment = await requireSegment(deps, teamId, broadcast.segmentId).catch(() => {
      throw conflict('The segment of this broadcast no longer exists; set another segment_id.');
    });
    const membership = segmentMembership(segment, await loadAudienceCatalog(em, teamId, { segments: false }));
    const [count] = await sqlQuery<{ n: number }>(
      em,
      `SELECT count(*)::int AS n FROM contact c WHERE c.team_id = ? AND ${membership.sql}`,
      [teamId, ...membership.bindings],
    );
    const now = deps.clock();
    const due = scheduledAt && scheduledAt > now ? scheduledAt : null;
    const estimate = await estimateBroadcast(
      deps,
      { id, teamId, region: broadcast.region, startAt: due ?? now, queuedSince: null },
      count!.n,
    );
    Object.assign(broadcast, {
      status: due ? 'scheduled' : 'queued',
      scheduledAt: due,
      sentAt: now,
      audienceSize: count!.n,
      nextBatchAt: due,
    });
    await em.flush();
    return { id, due, ...estimate };
  });
  await enqueueBroadcast(deps, id, result.due ?? undefined);
  return { id: result.id, finishesAt: result.finishesAt, warning: result.warning };
}

/**
 * Stops a broadcast that has not finished: contacts not yet walked are never written, and its
 * emails still waiting are canceled. Waits for a running batch to commit (the row lock), so the
 * count is exact. Answers how many emails will now not go out.
 */
export async function cancelBroadcast(
  deps: Pick<Deps, 'orm' | 'clock'>,
  teamId: string,
  id: string,
): Promise<{ canceledRemaining: number }> {
  return deps.orm.em.transactional(async (em) => {
    const broadcast = await requireBroadcast(deps, teamId, id, true);
    if (!['scheduled', 'queued', 'sending'].includes(broadcast.status))
      throw conflict(`This broadcast is ${broadcast.status}; only a scheduled or sending broadcast can be canceled.`);
    const canceledRemaining = await cancelWaiting(deps, broadcast);
    await em.flush();
    return { canceledRemaining };
  });
}
