import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../../config/index.js';

/** Mail not settled yet in one group (a region or a sending domain), by where it stands. */
export interface OutboxGroup {
  /** The region, or the sending domain (`by: 'domain'`). */
  key: string;
  /** The region's provider type (`smtp`, `ses`, `capture`); null by domain. */
  provider: string | null;
  /** Due now, never attempted. */
  queued: number;
  /** Claimed by a worker and with the provider now. */
  sending: number;
  /** Attempted, refused for now, waiting for another attempt. */
  retrying: number;
  /** Held past the team's daily quota until the next day. */
  parked: number;
  /** Scheduled for later by the sender. */
  scheduled: number;
  /** Seconds since the oldest due email (queued or retrying) became due; 0 when none is due. */
  oldest_due_seconds: number;
  /** Seconds since the oldest email still owed a delivery was accepted (or its scheduled time came); 0 when none is. */
  oldest_waiting_seconds: number;
}

/** The sending domain of a `from` (plain or `Name <a@b>`), lower-cased. */
const FROM_DOMAIN = `lower(substring("from" from '@([^@<>[:space:]]+)>{0,1}[[:space:]]*$'))`;

const SUMMARY = (key: string) => `
  SELECT ${key} AS key,
         count(*) FILTER (WHERE status = 'queued' AND attempts = 0 AND send_after <= now())::int AS queued,
         count(*) FILTER (WHERE status = 'sending')::int AS sending,
         count(*) FILTER (WHERE status = 'queued' AND attempts > 0)::int AS retrying,
         count(*) FILTER (WHERE status = 'queued' AND attempts = 0 AND send_after > now()
                            AND (scheduled_at IS NULL OR scheduled_at < send_after))::int AS parked,
         count(*) FILTER (WHERE status = 'queued' AND attempts = 0 AND scheduled_at >= send_after AND send_after > now())::int AS scheduled,
         coalesce(extract(epoch FROM now() - min(send_after) FILTER (WHERE status = 'queued' AND send_after <= now())), 0)::float AS oldest_due,
         coalesce(extract(epoch FROM now() - min(greatest(created_at, coalesce(scheduled_at, created_at)))
                    FILTER (WHERE status = 'sending' OR attempts > 0 OR send_after <= now())), 0)::float AS oldest_waiting
    FROM email
   WHERE status IN ('queued', 'sending')
   GROUP BY 1
   ORDER BY 1`;

/**
 * The outbox by region (with its provider) or by sending domain: what is queued, sending,
 * retrying, parked and scheduled, and how long the oldest has waited. Read by `postlane status`
 * and doctor; it reads only unsettled rows, which the outbox's partial indexes cover.
 */
export async function outboxSummary(
  deps: { orm: MikroORM; config: Pick<Config, 'POSTLANE_PROVIDERS'> },
  by: 'region' | 'domain',
): Promise<OutboxGroup[]> {
  const rows = await deps.orm.em
    .fork()
    .getConnection()
    .execute<
      (Omit<OutboxGroup, 'provider' | 'oldest_due_seconds' | 'oldest_waiting_seconds'> & {
        oldest_due: number;
        oldest_waiting: number;
      })[]
    >(SUMMARY(by === 'region' ? 'region' : FROM_DOMAIN));
  const providerOf = (region: string) =>
    deps.config.POSTLANE_PROVIDERS.find((p) => p.regions.includes(region))?.type ?? 'none';
  return rows.map(({ oldest_due, oldest_waiting, ...row }) => ({
    ...row,
    key: row.key ?? '(unknown)',
    provider: by === 'region' ? providerOf(row.key) : null,
    oldest_due_seconds: Math.max(0, Math.round(oldest_due)),
    oldest_waiting_seconds: Math.max(0, Math.round(oldest_waiting)),
  }));
}

/** The whole outbox in one line's worth of figures (doctor's queue check). */
export function outboxTotals(groups: readonly OutboxGroup[]) {
  const sum = (pick: (g: OutboxGroup) => number) => groups.reduce((n, g) => n + pick(g), 0);
  return {
    queued: sum((g) => g.queued),
    sending: sum((g) => g.sending),
    retrying: sum((g) => g.retrying),
    parked: sum((g) => g.parked),
    scheduled: sum((g) => g.scheduled),
    oldest_due_seconds: Math.max(0, ...groups.map((g) => g.oldest_due_seconds)),
    oldest_waiting_seconds: Math.max(0, ...groups.map((g) => g.oldest_waiting_seconds)),
  };
}
