import type { MikroORM } from '@mikro-orm/postgresql';

export interface JobBacklog {
  name: string;
  due: number;
  oldest_due_seconds: number;
}

/**
 * Due work nobody has picked up yet, with the age of the oldest (health, doctor and metrics): due
 * jobs per job name, and, as `emails`, due emails no drain run has claimed (emails are not jobs:
 * the email table is their queue).
 */
export async function jobBacklog(deps: { orm: MikroORM }): Promise<JobBacklog[]> {
  const rows = await deps.orm.em.getConnection().execute<{ name: string; due: string; oldest: number | null }[]>(
    `SELECT name, count(*) AS due, extract(epoch FROM now() - min(next_run_at))::float AS oldest
       FROM agenda_jobs WHERE next_run_at <= now() AND locked_at IS NULL AND disabled = false GROUP BY name
     UNION ALL
     SELECT 'emails', count(*), extract(epoch FROM now() - min(send_after))::float
       FROM email WHERE status = 'queued' AND send_after <= now() HAVING count(*) > 0
     ORDER BY name`,
  );
  return rows.map((r) => ({
    name: r.name,
    due: Number(r.due),
    oldest_due_seconds: Math.max(0, Math.round(r.oldest ?? 0)),
  }));
}
