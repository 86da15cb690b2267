import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { type ApiError, broadcastsPaused, sendingPaused } from '../../errors.js';

/**
 * Why a team's broadcast may not send now, or null: the team's own sending pause
 * (`sending_paused`), or its region's aggregate pause (`broadcasts_paused`), in that order.
 */
export async function broadcastRefusal(em: EntityManager, teamId: string, region: string): Promise<ApiError | null> {
  const [row] = await sqlQuery<{ team_paused: boolean; region_paused: boolean }>(
    em,
    `SELECT t.sending_paused_at IS NOT NULL AS team_paused,
            EXISTS (SELECT 1 FROM region_broadcast_pause WHERE region = ?) AS region_paused
       FROM team t WHERE t.id = ?`,
    [region, teamId],
  );
  if (row?.team_paused) return sendingPaused();
  if (row?.region_paused) return broadcastsPaused(region);
  return null;
}
