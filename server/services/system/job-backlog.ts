import type { Deps } from '../../deps.js';

export interface JobBacklog {
  name: string;
  due: number;
  oldest_due_seconds: number;
}

/** Due jobs nobody has picked up yet, per job name, with the age of the oldest (health and metrics). */
export async function jobBacklog(deps: Pick<Deps, 'orm'>): Promise<JobBacklog[]> {
  const rows = await deps.orm.em.getConnection().execute<{ name: string; due: string; oldest: number | null }[]>(
    `SELECT name, count(*) AS due, extract(epoch FROM now() - min(next_run_at))::float AS oldest
       FROM agenda_jobs WHERE next_run_at <= now() AND locked_at IS NULL AND disabled = false GROUP BY name ORDER BY name`,
  );
  return rows.map((r) => ({ name: r.name, due: Number(r.due), oldest_due_seconds: Math.max(0, Math.round(r.oldest ?? 0)) }));
}
