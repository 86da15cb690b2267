import { connect } from 'node:net';
import { age, defineStatusSection, type StatusView } from './status-section.js';

export interface HealthStatus {
  database: { ok: boolean; error?: string };
  /** A worker heartbeat: when one last finished the outbox sweep. */
  workers: { ok: boolean; last_seen_seconds: number | null };
  /** The inbound SMTP listener, when one is configured: whether its port takes a connection. */
  inbound: { configured: boolean; ok: boolean | null; address: string | null; error?: string };
}

/** Whether something takes a TCP connection at host:port within `ms`. */
function probeTcp(host: string, port: number, ms = 1_500): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host, port });
    const done = (error: string | null) => {
      socket.destroy();
      resolve(error);
    };
    socket.setTimeout(ms, () => done(`no answer within ${ms / 1000} s`));
    socket.once('connect', () => done(null));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

export const healthSection = defineStatusSection<HealthStatus>({
  name: 'health',
  title: 'Health',
  async collect({ orm, config }) {
    const inboundPort = config.POSTLANE_INBOUND_PORT;
    const inbound: HealthStatus['inbound'] =
      inboundPort === undefined
        ? { configured: false, ok: null, address: null }
        : await probeTcp(config.POSTLANE_INBOUND_HOST, inboundPort).then((error) => ({
            configured: true,
            ok: error === null,
            address: `${config.POSTLANE_INBOUND_HOST}:${inboundPort}`,
            ...(error ? { error } : {}),
          }));
    if (!orm)
      return {
        database: { ok: false, error: 'unreachable' },
        workers: { ok: false, last_seen_seconds: null },
        inbound,
      };
    // A worker that has missed three sweeps is presumed absent (as /health judges it).
    const silence = config.POSTLANE_SWEEP_INTERVAL_SECONDS * 3 + 60;
    const [row] = await orm.em
      .fork()
      .getConnection()
      .execute<{ idle: number | null }[]>(
        `SELECT extract(epoch FROM now() - max(last_finished_at))::float AS idle FROM agenda_jobs WHERE name = 'outbox.sweep'`,
      );
    const idle = row?.idle == null ? null : Math.max(0, Math.round(row.idle));
    return {
      database: { ok: true },
      workers: { ok: idle !== null && idle <= silence, last_seen_seconds: idle },
      inbound,
    };
  },
  view(health): StatusView {
    const problems = [
      !health.database.ok && 'database unreachable',
      health.database.ok && !health.workers.ok && 'no worker running',
      health.inbound.ok === false && 'inbound listener not answering',
    ].filter((p): p is string => Boolean(p));
    return {
      state: !health.database.ok || !health.workers.ok ? 'fail' : problems.length > 0 ? 'warn' : 'ok',
      summary: problems.length > 0 ? problems.join('; ') : 'database, workers and listeners answer',
      fields: [
        [
          'Database',
          health.database.ok ? 'ok' : `unreachable${health.database.error ? ` (${health.database.error})` : ''}`,
        ],
        [
          'Workers',
          health.workers.last_seen_seconds === null
            ? health.database.ok
              ? 'none has ever run'
              : 'unknown'
            : `${health.workers.ok ? 'ok' : 'silent'}, last seen ${age(health.workers.last_seen_seconds) === '-' ? 'just now' : `${age(health.workers.last_seen_seconds)} ago`}`,
        ],
        [
          'Inbound SMTP',
          !health.inbound.configured
            ? 'not configured'
            : health.inbound.ok
              ? `ok (${health.inbound.address})`
              : `not answering at ${health.inbound.address} (${health.inbound.error})`,
        ],
      ],
    };
  },
});
