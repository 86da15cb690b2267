import type { PlanName } from '../../../config/plans.js';
import type { Deps } from '../../deps.js';
import { type ITeam, Team } from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';
import { DEFAULT_POOL } from '../../providers/direct/source-ips.js';
import { assertTeamNameFree } from './create-team.js';

export interface TeamChanges {
  name?: string;
  ownerEmails?: string[];
  plan?: PlanName;
  overageEnabled?: boolean;
  /** A pool of source IPs a direct provider names; `default` unpins the team. */
  ipPool?: string;
}

/** Only what is given changes. */
export async function updateTeam(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  changes: TeamChanges,
): Promise<ITeam> {
  const em = deps.orm.em;
  const team = await em.findOne(Team, teamId);
  if (!team) throw notFound('Team');
  if (changes.name !== undefined) await assertTeamNameFree(deps, changes.name, teamId);
  const { ipPool, ...rest } = changes;
  em.assign(team, Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)));
  if (ipPool !== undefined) team.ipPool = ipPool === DEFAULT_POOL ? null : knownPool(deps.config, ipPool);
  await em.flush();
  return team;
}

/** A pool some direct provider names: a typo must not pin a team to the default pool unnoticed. */
function knownPool(config: Deps['config'], pool: string): string {
  const pools = config.POSTLANE_PROVIDERS.flatMap((p) => (p.type === 'direct' ? Object.keys(p.pools ?? {}) : []));
  if (!pools.includes(pool))
    throw validationError(
      `ip_pool: no direct provider in POSTLANE_PROVIDERS has a pool named ${pool} (${pools.length > 0 ? `pools: ${[...new Set(pools)].join(', ')}` : 'none has pools'})`,
    );
  return pool;
}
