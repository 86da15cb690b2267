import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config/index.js';
import { listeningUrl } from '../../config/schema.js';
import { DatabaseUnavailableError, initOrm, waitForDatabase } from '../../server/db/orm.js';
import { collectStatus, STATUS_SECTIONS, type StatusReport } from '../../server/services/status/status-sections.js';
import { defineStatusSection, type StatusView } from '../../server/services/status/status-section.js';
import { DATABASE_WAIT_MS } from '../lib/context.js';
import { serviceStatus } from './systemd-unit.js';

export interface ServiceState {
  /** `systemd` or `background` as installed, `hand-started` when only a `postlane serve` of someone's answers, or `stopped`. */
  mode: 'systemd' | 'background' | 'hand-started' | 'stopped';
  pid: number | null;
  url: string;
  /** What answered GET /health at the listening address: Postlane (by the body's shape), something else, or nothing. */
  health: 'postlane' | 'other' | 'none';
  health_ok: boolean | null;
}

/** Whether the body is Postlane's /health (its `database` and `jobs.backlog`), not something else on the port. */
function isPostlaneHealth(body: unknown): body is { ok: boolean } {
  const b = body as { ok?: unknown; database?: { ok?: unknown }; jobs?: { backlog?: unknown } } | null;
  return typeof b?.ok === 'boolean' && typeof b.database?.ok === 'boolean' && Array.isArray(b.jobs?.backlog);
}

/** GET /health at the configured listening address, within 2 s. */
export async function probeHealth(url: string): Promise<Pick<ServiceState, 'health' | 'health_ok'>> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    const body: unknown = await response.json().catch(() => null);
    return isPostlaneHealth(body) ? { health: 'postlane', health_ok: body.ok } : { health: 'other', health_ok: null };
  } catch {
    return { health: 'none', health_ok: null };
  }
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
      probeHealth(url),
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
