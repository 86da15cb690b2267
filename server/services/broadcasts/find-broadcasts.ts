import { LockMode } from '@mikro-orm/core';
import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { Broadcast, type IBroadcast } from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { estimateBroadcast } from './broadcast-capacity.js';

/** A broadcast with its progress: emails accepted by the provider, and the live estimate while it runs. */
export interface BroadcastProgress {
  broadcast: IBroadcast;
  sentCount: number;
  finishesAt: Date | null;
}

/** `lock`: held until the caller's transaction ends, and read after the lock is taken, so the state is current. */
export async function requireBroadcast(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  id: string,
  lock = false,
): Promise<IBroadcast> {
  const broadcast = await deps.orm.em.findOne(
    Broadcast,
    { id, team: teamId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {},
  );
  if (!broadcast) throw notFound('Broadcast');
  return broadcast;
}

async function sentCounts(deps: Pick<Deps, 'orm'>, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sqlQuery<{ broadcast_id: string; n: number }>(
    deps.orm.em,
    `SELECT broadcast_id, count(*)::int AS n FROM email
      WHERE broadcast_id IN (SELECT b::uuid FROM jsonb_array_elements_text(?::jsonb) AS b) AND status = 'sent' GROUP BY 1`,
    [JSON.stringify(ids)],
  );
  return new Map(rows.map((row) => [row.broadcast_id, row.n]));
}

/** Contacts still owed by a running broadcast: not yet walked, or written and not yet sent. */
async function withProgress(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  broadcast: IBroadcast,
  sentCount: number,
): Promise<BroadcastProgress> {
  if (!['scheduled', 'queued', 'sending'].includes(broadcast.status)) {
    return { broadcast, sentCount, finishesAt: broadcast.status === 'sent' ? broadcast.updatedAt : null };
  }
  const remaining = Math.max(0, (broadcast.audienceSize ?? 0) - sentCount - broadcast.skippedCount);
  const estimate = await estimateBroadcast(
    deps,
    {
      id: broadcast.id,
      teamId: broadcast.team.id,
      region: broadcast.region,
      startAt: broadcast.nextBatchAt ?? broadcast.scheduledAt ?? deps.clock(),
      queuedSince: broadcast.sentAt ?? null,
    },
    remaining,
  ).catch(() => null);
  return { broadcast, sentCount, finishesAt: estimate?.finishesAt ?? null };
}

export async function getBroadcast(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  teamId: string,
  id: string,
): Promise<BroadcastProgress> {
  const broadcast = await requireBroadcast(deps, teamId, id);
  return withProgress(deps, broadcast, (await sentCounts(deps, [id])).get(id) ?? 0);
}

export async function listBroadcasts(
  deps: Pick<Deps, 'orm' | 'config' | 'clock'>,
  teamId: string,
  query: PageQuery,
): Promise<Page<BroadcastProgress>> {
  const page = await paginate(deps.orm.em, Broadcast, { team: teamId }, query, ['html', 'text']);
  const counts = await sentCounts(
    deps,
    page.data.map((b) => b.id),
  );
  return {
    hasMore: page.hasMore,
    data: await Promise.all(page.data.map((b) => withProgress(deps, b, counts.get(b.id) ?? 0))),
  };
}
