import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config/index.js';
import { listeningUrl } from '../../config/schema.js';
import { DatabaseUnavailableError, initOrm, waitForDatabase } from '../../server/db/orm.js';
import { collectStatus, STATUS_SECTIONS, type StatusReport } from '../../server/services/status/status-sections.js';
import { defineStatusSection, type StatusView } from '../../server/services/status/status-section.js';
import { type HealthProbe, probeHealth } from '../../server/services/health/probe-health.js';
import { DATABASE_WAIT_MS } from '../lib/context.js';
import { serviceStatus } from './systemd-unit.js';

export interface ServiceState {
  /** `systemd` or `background` as installed, `hand-started` when only a `postlane serve` of someone's answers, or `stopped`. */
  mode: 'systemd' | 'background' | 'hand-started' | 'stopped';
  pid: number | null;
  url: string;
  /** What answered GET /health at the listening address: Postlane (by the body's shape), something else, or nothing. */
  health: HealthProbe['health'];
  health_ok: boolean | null;
}

export const serviceSection = defineStatusSection<ServiceState>({
  name: 'service',
  title: 'Service',
  async collect({ config }) {
    const url = listeningUrl(config.POSTLANE_HOST, config.POSTLANE_PORT);
    const [unit, health] = await Promise.all([
      Promise.resolve().then(() => {
        try {
          return serviceStatus();
        } catch {
          return null;
        }
      }),
      probeHealth(url).then(({ health, health_ok }) => ({ health, health_ok })),
    ]);
    const mode: ServiceState['mode'] = unit?.running
      ? unit.mode
      : health.health === 'postlane'
        ? 'hand-started'
        : 'stopped';
    return { mode, pid: unit?.running ? unit.pid : null, url, ...health };
  },
  view(s): StatusView {
    const answer =
      s.health === 'postlane'
        ? `Postlane answers at ${s.url}${s.health_ok ? '' : ' (degraded: see Health)'}`
        : s.health === 'other'
          ? `something other than Postlane answers at ${s.url}`
          : `nothing answers at ${s.url}`;
    const running = s.mode === 'stopped' ? 'stopped' : `running (${s.mode}${s.pid ? `, pid ${s.pid}` : ''})`;
    return {
      state: s.health === 'postlane' ? (s.health_ok ? 'ok' : 'warn') : 'fail',
      summary: `${running}; ${answer}`,
    };
  },
});

/** Connects for `status`; a database that does not answer within the wait is shown as down, not thrown. */
export async function openStatusDatabase(config: Config): Promise<MikroORM | null> {
  try {
    await waitForDatabase(config, null, DATABASE_WAIT_MS);
    return await initOrm(config);
  } catch (err) {
    if (err instanceof DatabaseUnavailableError) return null;
    throw err;
  }
}

export const statusReport = (config: Config, orm: MikroORM | null): Promise<StatusReport> =>
  collectStatus({ config, orm }, [serviceSection, ...STATUS_SECTIONS]);
