import type { MikroORM } from '@mikro-orm/postgresql';

/** Steps due now and not yet executed, and how long the oldest of them has been due (seconds, 0 when none). */
export async function dueStepFigures(orm: MikroORM): Promise<{ due: number; oldestSeconds: number }> {
  // Both off the partial index of open steps with a due time, in due order.
  const [row] = await orm.em.getConnection().execute<{ n: number; oldest: number | null }[]>(
    `SELECT (SELECT count(*) FROM automation_run_step WHERE status IN ('pending', 'waiting') AND due_at IS NOT NULL AND due_at <= now())::int AS n,
            (SELECT extract(epoch FROM now() - min(due_at)) FROM automation_run_step WHERE status IN ('pending', 'waiting') AND due_at IS NOT NULL AND due_at <= now())::float8 AS oldest`,
  );
  return { due: row?.n ?? 0, oldestSeconds: Math.max(0, Math.round(row?.oldest ?? 0)) };
}
