import { defineStatusSection, needsDatabase, type StatusView } from './status-section.js';

export interface PausedThings {
  /** Teams whose sending is paused by their bounce or complaint rate. */
  teams: { id: string; name: string; paused_at: string }[];
  /** Regions whose broadcasts wait, by the platform-wide rate that paused them. */
  regions: { region: string; metric: string; rate: number; paused_at: string }[];
  /** Broadcasts queued or sending in a paused region, or of a paused team: they wait. */
  broadcasts_waiting: number;
}

export const pausedSection = defineStatusSection<PausedThings | null>({
  name: 'paused',
  title: 'Paused',
  async collect({ orm }) {
    if (!orm) return null;
    const connection = orm.em.fork().getConnection();
    const [teams, regions, [broadcasts]] = await Promise.all([
      connection.execute<{ id: string; name: string; paused_at: Date }[]>(
        `SELECT id, name, sending_paused_at AS paused_at FROM team WHERE sending_paused_at IS NOT NULL ORDER BY sending_paused_at LIMIT 100`,
      ),
      connection.execute<{ region: string; metric: string; rate: number; paused_at: Date }[]>(
        `SELECT region, metric, rate, paused_at FROM region_broadcast_pause ORDER BY region, metric`,
      ),
      connection.execute<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM broadcast b JOIN team t ON t.id = b.team_id
          WHERE b.status IN ('queued', 'sending') AND (t.sending_paused_at IS NOT NULL OR EXISTS (SELECT 1 FROM region_broadcast_pause))`,
      ),
    ]);
    return {
      teams: teams.map((t) => ({ id: t.id, name: t.name, paused_at: new Date(t.paused_at).toISOString() })),
      regions: regions.map((r) => ({ ...r, paused_at: new Date(r.paused_at).toISOString() })),
      broadcasts_waiting: broadcasts?.n ?? 0,
    };
  },
  view(paused): StatusView {
    if (paused === null) return needsDatabase;
    const rows = [
      ...paused.teams.map((t) => ['team', `${t.name} (${t.id})`, 'sending paused by its rates', t.paused_at]),
      ...paused.regions.map((r) => [
        'region',
        r.region,
        `broadcasts paused: ${r.metric} ${(r.rate * 100).toFixed(2)}%`,
        r.paused_at,
      ]),
    ].map((row) => row.map((cell) => cell.replace('T', ' ').replace(/\.\d+Z$/, '')));
    return {
      state: rows.length > 0 ? 'warn' : 'ok',
      summary:
        rows.length === 0
          ? 'nothing paused'
          : `${paused.teams.length} teams, ${paused.regions.length} regions paused; ${paused.broadcasts_waiting} broadcasts waiting`,
      table: rows.length === 0 ? undefined : { columns: ['WHAT', 'WHICH', 'WHY', 'SINCE'], rows },
    };
  },
});
