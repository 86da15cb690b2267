import type { Deps } from '../../deps.js';
import { errorFields } from '../../logger.js';

export interface Health {
  ok: boolean;
  database: { ok: boolean; error?: string };
  jobs: {
    ok: boolean;
    /** Due jobs nobody has picked up yet, per job name, with the age of the oldest. */
    backlog: { name: string; due: number; oldest_due_seconds: number }[];
    /** When a worker last finished the minutely outbox sweep: a worker heartbeat. */
    last_sweep_at: string | null;
  };
}

export async function checkHealth(deps: Pick<Deps, 'orm' | 'clock' | 'config' | 'logger'>): Promise<Health> {
  // A worker that has missed three sweeps is presumed absent.
  const silenceMs = deps.config.POSTLANE_SWEEP_INTERVAL_SECONDS * 3 * 1000 + 60_000;
  const connection = deps.orm.em.getConnection();
  try {
    const backlog = await connection.execute<{ name: string; due: string; oldest: number | null }[]>(
      `SELECT name, count(*) AS due, extract(epoch FROM now() - min(next_run_at))::float AS oldest
         FROM agenda_jobs WHERE next_run_at <= now() AND locked_at IS NULL AND disabled = false GROUP BY name ORDER BY name`,
    );
    const [sweep] = await connection.execute<{ last_finished_at: string | Date | null }[]>(
      `SELECT max(last_finished_at) AS last_finished_at FROM agenda_jobs WHERE name = 'outbox.sweep'`,
    );
    const lastSweep = sweep?.last_finished_at ? new Date(sweep.last_finished_at) : null;
    const workerAlive = lastSweep !== null && deps.clock().getTime() - lastSweep.getTime() < silenceMs;
    return {
      ok: workerAlive,
      database: { ok: true },
      jobs: {
        ok: workerAlive,
        backlog: backlog.map((r) => ({ name: r.name, due: Number(r.due), oldest_due_seconds: Math.max(0, Math.round(r.oldest ?? 0)) })),
        last_sweep_at: lastSweep?.toISOString() ?? null,
      },
    };
  } catch (err) {
    // The probe needs no key: the reason (hosts, users) goes to the log, not to the caller.
    deps.logger.error({ err: errorFields(err) }, 'health check: database unreachable');
    return { ok: false, database: { ok: false, error: 'unreachable' }, jobs: { ok: false, backlog: [], last_sweep_at: null } };
  }
}
