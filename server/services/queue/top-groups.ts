import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';

export interface GroupFigures {
  mx_group: string;
  /** 1 when any source IP is suspended for the group now. */
  suspended: number;
  connections: number;
  deferrals: number;
}

/**
 * The MX groups most worth watching, summed over source IPs: the suspended first, then those with
 * the most deferrals. `limit` bounds how many, so a metric labelled by group has bounded cardinality
 * however many domains direct delivery reaches.
 */
export async function topGroups(deps: { orm: MikroORM; clock: () => Date }, limit: number): Promise<GroupFigures[]> {
  const now = deps.clock();
  return sqlQuery<GroupFigures>(
    deps.orm.em.fork(),
    `SELECT s.mx_group,
       max(CASE WHEN s.suspended_until > ?::timestamptz THEN 1 ELSE 0 END)::int AS suspended,
       sum((SELECT count(*) FROM jsonb_each(s.leases) WHERE value::bigint > ?::bigint))::int AS connections,
       sum(s.deferrals)::int AS deferrals
     FROM shaping_state s GROUP BY s.mx_group
     ORDER BY suspended DESC, deferrals DESC, s.mx_group LIMIT ?`,
    [now, now.getTime(), limit],
    'postlane_queue_top_groups',
  );
}
