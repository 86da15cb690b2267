import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { DeliverabilityMetric, EmailFacts } from '../../entities/index.js';

/** Counter rows per team, day and region; a write takes one at random so concurrent sends rarely wait on each other. */
const SHARDS = 8;

const ADD_TO_DAY = `
  INSERT INTO deliverability_day (team_id, day, region, shard, sent, bounced, complained)
  VALUES (?, (?::timestamptz AT TIME ZONE 'UTC')::date, ?, ?, ?, ?, ?)
  ON CONFLICT (team_id, day, region, shard) DO UPDATE
    SET sent = deliverability_day.sent + excluded.sent,
        bounced = deliverability_day.bounced + excluded.bounced,
        complained = deliverability_day.complained + excluded.complained`;

function addToDay(
  tx: EntityManager,
  email: EmailFacts,
  day: Date,
  counts: { sent: number; bounced: number; complained: number },
) {
  const shard = Math.floor(Math.random() * SHARDS);
  return sqlQuery(
    tx,
    ADD_TO_DAY,
    [email.team.id, day.toISOString(), email.region, shard, counts.sent, counts.bounced, counts.complained],
    'postlane_deliverability_add',
  );
}

/**
 * The provider accepted these emails (their first acceptance, when `sent_at` is set): the
 * denominator of the rates, one statement for a whole settled batch.
 */
export function countAccepted(tx: EntityManager, emails: readonly EmailFacts[], at: Date) {
  if (emails.length === 0) return;
  const rows = emails.map((email) => ({ team_id: email.team.id, region: email.region }));
  return sqlQuery(
    tx,
    `INSERT INTO deliverability_day (team_id, day, region, shard, sent, bounced, complained)
     SELECT team_id, (?::timestamptz AT TIME ZONE 'UTC')::date, region, ?, count(*), 0, 0
       FROM jsonb_to_recordset(?::jsonb) AS r(team_id uuid, region text) GROUP BY team_id, region
      -- One order for every writer: two batches upserting the same rows never wait on each other in a cycle.
      ORDER BY team_id, region
     ON CONFLICT (team_id, day, region, shard) DO UPDATE SET sent = deliverability_day.sent + excluded.sent`,
    [at.toISOString(), Math.floor(Math.random() * SHARDS), JSON.stringify(rows)],
    'postlane_deliverability_accepted',
  );
}

/**
 * A hard bounce or complaint, counted on the day the email was sent so that a window's rate is
 * "of the emails sent in it", and once per email and metric (a bounce reported per recipient, or
 * twice, is still one bounced email). An email the provider refused outright (never accepted, no
 * `sent_at`) counts as sent and bounced on the day of the bounce: the provider handled it. Answers
 * whether it counted.
 */
export async function countOutcome(
  tx: EntityManager,
  email: EmailFacts,
  metric: DeliverabilityMetric,
  type: string,
  at: Date,
): Promise<boolean> {
  // `sent_at` as this transaction sees it (the caller's copy may predate the acceptance it just
  // wrote). An earlier soft bounce of the same email (also `email.bounced`) did not count.
  const [row] = await sqlQuery<{ sent_at: string | null; seen: boolean }>(
    tx,
    `SELECT e.sent_at, EXISTS (
              SELECT 1 FROM event ev WHERE ev.email_id = e.id AND ev.type = ?
                 AND coalesce(ev.payload->'bounce'->>'type', 'Permanent') ~* '^(permanent|hard)$') AS seen
       FROM email e WHERE e.id = ?`,
    [type, email.id],
  );
  if (!row || row.seen) return false;
  const sentAt = row.sent_at ? new Date(row.sent_at) : null;
  await addToDay(tx, email, sentAt ?? at, {
    sent: sentAt ? 0 : 1,
    bounced: metric === 'bounce_rate' ? 1 : 0,
    complained: metric === 'complaint_rate' ? 1 : 0,
  });
  return true;
}
