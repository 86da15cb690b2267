import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { releaseExpiredLeases, wakeDrain } from './drain-outbox.js';

/**
 * The safety net of the email outbox, per region this appliance serves: queues again the emails of
 * a worker that died holding them (once their lease is over), and books a drain run where emails
 * are overdue with none waiting (a job row that gave up, a run that died). Extra runs are harmless:
 * claims skip what another run holds. Returns the regions woken.
 */
export async function sweepOutbox(deps: Deps): Promise<string[]> {
  const woken: string[] = [];
  for (const region of deps.providers.regions) {
    const released = await releaseExpiredLeases(deps, region);
    const [overdue] = await sqlQuery(
      deps.orm.em.fork(),
      `SELECT 1 FROM email WHERE status = 'queued' AND region = ? AND send_after < now() - make_interval(secs => ?) LIMIT 1`,
      [region, deps.config.POSTLANE_SWEEP_AFTER_SECONDS],
    );
    if (released === 0 && !overdue) continue;
    await wakeDrain(deps, region, new Date());
    woken.push(region);
  }
  if (woken.length > 0)
    deps.logger.info({ regions: woken }, 'outbox sweep woke the drain of regions with overdue emails');
  return woken;
}
