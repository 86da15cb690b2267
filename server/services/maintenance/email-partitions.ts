import type { Knex } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { DAYS_AHEAD } from './task-catalogue.js';

type PartitionDeps = Pick<Deps, 'orm' | 'clock' | 'config'>;

/**
 * The tables partitioned by UTC day of `created_at` (Migration20261220000000_email_partitions).
 * An email's recipients and attachments carry its `created_at`, so their partitions of a day go
 * with its; events are dropped by their own time.
 */
const EMAIL_TABLES = ['email', 'email_recipient', 'email_attachment'] as const;
const PARTITIONED_TABLES = [...EMAIL_TABLES, 'event'] as const;

const DAY_MS = 86_400_000;

/**
 * Partition DDL waits this long for its lock and then gives up until the next run: a DROP or
 * ATTACH queued behind a long query would otherwise hold up every query that comes after it.
 */
const LOCK_TIMEOUT = '2s';

async function withLockTimeout<T>(deps: PartitionDeps, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return deps.orm.em
    .getConnection()
    .getKnex()
    .transaction(async (trx) => {
      await trx.raw(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      return work(trx);
    });
}

/** Makes the day partitions from today to DAYS_AHEAD days ahead that are missing; returns how many tables gained one. */
export async function addEmailPartitions(deps: PartitionDeps): Promise<number> {
  const today = Math.floor(deps.clock().getTime() / DAY_MS);
  let added = 0;
  for (let day = today; day <= today + DAYS_AHEAD; day++) {
    const date = new Date(day * DAY_MS).toISOString().slice(0, 10);
    for (const table of PARTITIONED_TABLES) {
      const made = await withLockTimeout(
        deps,
        async (trx) =>
          (
            await trx.raw<{ rows: { made: boolean }[] }>('SELECT postlane_add_day_partition(?, ?::date) AS made', [
              table,
              date,
            ])
          ).rows[0]!.made,
      );
      if (made) added++;
    }
  }
  return added;
}

interface Partition {
  parent: (typeof PARTITIONED_TABLES)[number];
  name: string;
  /** `_p20261220` or `_legacy`: partitions of the same day in each table share it. */
  suffix: string;
}

/** The day partitions (and the legacy one) that end at or before `cutoff`; never the DEFAULT partition. */
async function partitionsEndingBy(deps: PartitionDeps, cutoff: Date): Promise<Partition[]> {
  const rows = await deps.orm.em.getConnection().execute<{ parent: Partition['parent']; name: string }[]>(
    `SELECT p.relname AS parent, c.relname AS name
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = ANY(?::text[]) AND p.relnamespace = 'public'::regnamespace
        AND (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz <= ?
      ORDER BY c.relname`,
    [`{${PARTITIONED_TABLES.join(',')}}`, cutoff],
  );
  return rows.map((row) => ({ ...row, suffix: row.name.slice(row.parent.length) }));
}

/**
 * Emails past POSTLANE_EMAIL_RETENTION_DAYS go a day at a time: the day's partitions of `email`,
 * `email_recipient` and `email_attachment` are dropped, whatever the volume. A day that still
 * holds mail not yet handed over (queued, scheduled or being sent) is kept whole until that mail
 * has gone, so retention never loses mail. Events go by their own day. Each DROP is a transaction
 * of its own: it locks its parent table for a moment, and holding one parent's lock while waiting
 * for another's would stall every query on the first (a run cut short leaves a day's recipients or
 * attachments without their emails, and the next run drops them). Returns how many partitions went.
 */
export async function dropExpiredEmailPartitions(deps: PartitionDeps): Promise<number> {
  const cutoff = new Date(deps.clock().getTime() - deps.config.POSTLANE_EMAIL_RETENTION_DAYS * DAY_MS);
  const expired = await partitionsEndingBy(deps, cutoff);
  let dropped = 0;
  const drop = async (part: Partition) => {
    await withLockTimeout(deps, (trx) => trx.raw(`DROP TABLE "${part.name}"`));
    dropped++;
  };
  for (const suffix of new Set(expired.filter((p) => p.parent !== 'event').map((p) => p.suffix))) {
    const [email, ...rest] = EMAIL_TABLES.map((table) =>
      expired.find((p) => p.parent === table && p.suffix === suffix),
    );
    if (email) {
      // Each condition matches a partial index of the partition (email_due_idx, email_lease_idx).
      const [{ held }] = await deps.orm.em
        .getConnection()
        .execute<[{ held: boolean }]>(
          `SELECT EXISTS (SELECT 1 FROM "${email.name}" WHERE status = 'queued') OR EXISTS (SELECT 1 FROM "${email.name}" WHERE status = 'sending') AS held`,
        );
      // New mail lands in today's partition, and a row never goes back to queued or sending: this holds until the drop.
      if (held) continue;
      await drop(email);
    }
    for (const part of rest) if (part) await drop(part);
  }
  for (const part of expired.filter((p) => p.parent === 'event')) await drop(part);
  return dropped;
}
