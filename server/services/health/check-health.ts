import type { Deps } from '../../deps.js';
import { errorFields } from '../../logger.js';
import { type JobBacklog, jobBacklog } from './job-backlog.js';

export interface Health {
  ok: boolean;
  database: { ok: boolean; error?: string };
  jobs: {
    ok: boolean;
    /** Due jobs nobody has picked up yet, per job name, and due emails not yet claimed (`emails`), with the age of the oldest. */
    backlog: JobBacklog[];
    /** When a worker last finished the minutely outbox sweep: a worker heartbeat. */
    last_sweep_at: string | null;
  };
}

export async function checkHealth(deps: Pick<Deps, 'orm' | 'clock' | 'config' | 'logger'>): Promise<Health> {
  // A worker that has missed three sweeps is presumed absent.
  const silenceMs = deps.config.POSTLANE_SWEEP_INTERVAL_SECONDS * 3 * 1000 + 60_000;
  const connection = deps.orm.em.getConnection();
  try {
    const backlog = await jobBacklog(deps);
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
        backlog,
        last_sweep_at: lastSweep?.toISOString() ?? null,
      },
    };
  } catch (err) {
    // The probe needs no key: the reason (hosts, users) goes to the log, not to the caller.
    deps.logger.error({ err: errorFields(err) }, 'health check: database unreachable');
    return {
      ok: false,
      database: { ok: false, error: 'unreachable' },
      jobs: { ok: false, backlog: [], last_sweep_at: null },
    };
  }
}
