import type { MikroORM } from '@mikro-orm/postgresql';
import { maskAddresses } from '../../logger.js';
import { defineStatusSection, needsDatabase, type StatusView } from './status-section.js';

export interface ProviderErrorGroup {
  region: string;
  provider: string;
  /** The provider's answer, addresses masked, so an error shared by many recipients reads as one. */
  message: string;
  /** Emails carrying it now: still retrying, and failed in the window. */
  retrying: number;
  failed: number;
  first_seen: string;
  last_seen: string;
}

/** How far back failed emails count (retrying ones count whatever their age). */
const WINDOW_HOURS = 24;

/**
 * The errors providers gave the emails still waiting for another attempt, and those that failed
 * in the last day, by region and message, most recent first. From the emails themselves (the
 * `last_error` each keeps), so it holds across processes and restarts.
 */
export async function recentProviderErrors(
  orm: MikroORM,
  providers: readonly { type: string; regions: readonly string[] }[],
  limit = 10,
): Promise<ProviderErrorGroup[]> {
  const rows = await orm.em
    .fork()
    .getConnection()
    .execute<
      { region: string; message: string; retrying: number; failed: number; first_seen: Date; last_seen: Date }[]
    >(
      `SELECT region, last_error AS message,
              count(*) FILTER (WHERE status = 'queued')::int AS retrying,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              min(updated_at) AS first_seen, max(updated_at) AS last_seen
         FROM email
        WHERE last_error IS NOT NULL
          AND ((status = 'queued' AND attempts > 0)
            OR (status = 'failed' AND created_at > now() - make_interval(hours => ${WINDOW_HOURS * 2}) AND updated_at > now() - make_interval(hours => ${WINDOW_HOURS})))
        GROUP BY region, last_error
        ORDER BY max(updated_at) DESC
        LIMIT 500`,
    );
  const merged = new Map<string, ProviderErrorGroup>();
  for (const row of rows) {
    const message = maskAddresses(row.message).slice(0, 500);
    const key = `${row.region}\u0000${message}`;
    const first = new Date(row.first_seen).toISOString();
    const last = new Date(row.last_seen).toISOString();
    const seen = merged.get(key);
    if (seen) {
      seen.retrying += row.retrying;
      seen.failed += row.failed;
      if (first < seen.first_seen) seen.first_seen = first;
      if (last > seen.last_seen) seen.last_seen = last;
    } else
      merged.set(key, {
        region: row.region,
        provider: providers.find((p) => p.regions.includes(row.region))?.type ?? 'none',
        message,
        retrying: row.retrying,
        failed: row.failed,
        first_seen: first,
        last_seen: last,
      });
  }
  return [...merged.values()].sort((a, b) => b.last_seen.localeCompare(a.last_seen)).slice(0, limit);
}

const shortTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, '');

export const providerErrorsSection = defineStatusSection<ProviderErrorGroup[] | null>({
  name: 'provider_errors',
  title: 'Provider errors (retrying now, or failed in the last 24 h)',
  collect: async ({ orm, config }) => (orm ? recentProviderErrors(orm, config.POSTLANE_PROVIDERS) : null),
  view(groups): StatusView {
    if (groups === null) return needsDatabase;
    const retrying = groups.reduce((n, g) => n + g.retrying, 0);
    return {
      state: retrying > 0 ? 'warn' : 'ok',
      summary:
        groups.length === 0
          ? 'none'
          : `${groups.length} distinct, ${retrying} emails retrying on them; latest: ${groups[0]!.provider} ${groups[0]!.region}: ${groups[0]!.message}`,
      table:
        groups.length === 0
          ? undefined
          : {
              columns: ['PROVIDER', 'REGION', 'RETRYING', 'FAILED', 'FIRST SEEN', 'LAST SEEN', 'MESSAGE'],
              rows: groups.map((g) => [
                g.provider,
                g.region,
                String(g.retrying),
                String(g.failed),
                shortTime(g.first_seen),
                shortTime(g.last_seen),
                g.message,
              ]),
            },
    };
  },
});
