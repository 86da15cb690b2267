import { COUNTED_METRICS } from './metric-names.js';

/**
 * The two sources of hourly counts, each a SELECT of `hour, domain, broadcast_id, email_id` and
 * one column per counted metric, for one team (`?` first) and a range of hours (`?`, `?`).
 * Both count the same things; the rollup is what the API reads, the events are what the rollup
 * is checked against (tests), what the per-email breakdown reads (bounded by `email_id`), and the
 * baseline of the benchmark.
 */

export interface HourlySource {
  sql: string;
  bindings: unknown[];
}

/** The rollup the triggers keep: a few rows per hour (one per sender domain, broadcast and writing backend). */
export const rollupHours = (teamId: string, from: Date, to: Date): HourlySource => ({
  // The writing backends' rows of an hour are summed first, so what follows reads one row per hour, domain and broadcast.
  sql: `SELECT hour, domain, broadcast_id, NULL::uuid AS email_id, ${COUNTED_METRICS.map((c) => `sum(${c})::bigint AS ${c}`).join(', ')}
          FROM email_metrics_hourly
         WHERE team_id = ? AND hour >= ? AND hour < ?
         GROUP BY hour, domain, broadcast_id`,
  bindings: [teamId, from, to],
});

const STANDING = `NOT EXISTS (
  SELECT 1 FROM event p WHERE p.email_id = e.email_id AND p.type = 'email.prefetched'
     AND (p.payload->(CASE e.type WHEN 'email.opened' THEN 'open' ELSE 'click' END)->>'timestamp')::timestamptz = e.created_at
     AND (e.type = 'email.opened' OR p.payload->'click'->>'link' = e.payload->'click'->>'link'))`;

/**
 * The same counts recomputed from the emails and their events, by the definitions in
 * docs/api.md: a click or open that a later `email.prefetched` repeated does not count; an email
 * counts once toward `unique_opened` (`unique_clicked`), in the hour of its first open (click)
 * that still counts. `emails` narrows it to emails whose id is in the JSON array bound after the range
 * (`null` for all of the team's).
 */
export const eventHours = (teamId: string, from: Date, to: Date, emailIds: readonly string[] | null): HourlySource => {
  const emails = emailIds === null ? null : JSON.stringify(emailIds);
  return {
    sql: `
  WITH scoped AS (
    SELECT e.email_id, e.type, e.created_at, e.payload,
           CASE WHEN e.type IN ('email.opened', 'email.clicked') THEN ${STANDING} ELSE true END AS standing
      FROM event e
     WHERE e.team_id = ? AND e.email_id IS NOT NULL
       AND (?::jsonb IS NULL OR e.email_id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid))
  ),
  firsts AS (
    SELECT email_id, type, min(created_at) AS first_at FROM scoped
     WHERE standing AND type IN ('email.opened', 'email.clicked') GROUP BY email_id, type
  ),
  rows AS (
    SELECT date_trunc('hour', s.created_at, 'UTC') AS hour, postlane_sender_domain(s.payload->>'from') AS domain,
           coalesce((s.payload->>'broadcast_id')::uuid, postlane_no_broadcast()) AS broadcast_id, s.email_id,
           0 AS received,
           (s.type = 'email.sent')::int AS sent,
           (s.type = 'email.delivered')::int AS delivered,
           (s.type = 'email.delivery_delayed')::int AS delivery_delayed,
           (s.type = 'email.failed')::int AS failed,
           (s.type IN ('email.bounced', 'email.soft_bounced') AND s.payload->'bounce'->>'type' = 'Permanent')::int AS bounced_permanent,
           (s.type IN ('email.bounced', 'email.soft_bounced') AND s.payload->'bounce'->>'type' = 'Transient')::int AS bounced_transient,
           (s.type IN ('email.bounced', 'email.soft_bounced') AND coalesce(s.payload->'bounce'->>'type', '') NOT IN ('Permanent', 'Transient'))::int AS bounced_undetermined,
           (s.type = 'email.complained')::int AS complained,
           (s.type = 'email.opened' AND s.standing)::int AS opened,
           (s.type = 'email.opened' AND s.standing AND s.created_at = f.first_at)::int AS unique_opened,
           (s.type = 'email.clicked' AND s.standing)::int AS clicked,
           (s.type = 'email.clicked' AND s.standing AND s.created_at = f.first_at)::int AS unique_clicked,
           0 AS unsubscribed,
           (s.type = 'email.suppressed')::int AS suppressed
      FROM scoped s LEFT JOIN firsts f ON f.email_id = s.email_id AND f.type = s.type
    UNION ALL
    SELECT date_trunc('hour', m.created_at, 'UTC'), postlane_sender_domain(m."from"),
           coalesce(m.broadcast_id, postlane_no_broadcast()), m.id,
           1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
      FROM email m
     WHERE m.team_id = ?
       AND (?::jsonb IS NULL OR m.id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid))
  )
  SELECT hour, domain, broadcast_id, email_id, ${COUNTED_METRICS.join(', ')} FROM rows WHERE hour >= ? AND hour < ?`,
    bindings: [teamId, emails, emails, teamId, emails, emails, from, to],
  };
};
