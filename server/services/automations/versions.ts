import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { Graph } from './graph.js';

/** Versions never change once written, so a process keeps the ones it has read (a bounded number). */
const cache = new WeakMap<object, Map<string, Graph>>();
const CACHED_VERSIONS = 1000;

/** An automation's graph at a version, or null once the automation is deleted. */
export async function loadVersion(
  deps: Pick<Deps, 'config'>,
  em: EntityManager,
  automationId: string,
  version: number,
): Promise<Graph | null> {
  let known = cache.get(deps.config);
  if (!known) cache.set(deps.config, (known = new Map<string, Graph>()));
  const name = `${automationId}:${version}`;
  const hit = known.get(name);
  if (hit) return hit;
  const [row] = await sqlQuery<Graph>(
    em,
    'SELECT steps, connections FROM automation_version WHERE automation_id = ? AND version = ?',
    [automationId, version],
  );
  if (!row) return null;
  if (known.size >= CACHED_VERSIONS) known.delete(known.keys().next().value!);
  known.set(name, row);
  return row;
}
