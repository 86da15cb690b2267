import { Migration } from '@mikro-orm/migrations';

/** The tables that grow with mail, partitioned by day of `created_at` (recipients and attachments carry their email's). */
const PARTITIONED: Record<string, { indexes: Record<string, string> }> = {
  email: {
    indexes: {
      email_team_listing_idx: '(team_id, created_at, id)',
      email_broadcast_idx: '(broadcast_id, status, attempts)',
      email_due_idx: `(region, send_after) where status = 'queued'`,
      email_lease_idx: `(region, lease_expires_at) where status = 'sending'`,
      email_provider_message_id_idx: '(provider_message_id)',
    },
  },
  email_recipient: { indexes: { email_recipient_email_id_index: '(email_id)' } },
  email_attachment: { indexes: { email_attachment_email_id_index: '(email_id)' } },
  event: { indexes: { event_email_id_index: '(email_id)', event_team_created_idx: '(team_id, created_at)' } },
};

/**
 * Bounded disk (docs/operations.md, "Disk and email retention"): `email`, `email_recipient`, `email_attachment`
 * and `event` become tables partitioned by RANGE on `created_at`, one partition per UTC day, so
 * retention drops a day whole (one catalog operation at any volume) instead of deleting rows.
 *
 * The existing table of each is not rewritten: it becomes the partition `<table>_legacy`, holding
 * everything up to the end of the day of its newest row (proved by a CHECK constraint, so the
 * attach does not scan it again), and keeps its indexes, which the parent's partitioned indexes
 * adopt as they are. The parents carry no primary key: one must include `created_at`, and building
 * that index on a large legacy table is what this avoids. Each partition has its own on `id` (ids
 * are UUIDs made by the application and SQL, never reused), and lookups by id probe each.
 *
 * Foreign keys into these tables would forbid dropping a partition, so those of `email_recipient`,
 * `email_attachment`, `event`, `email_tracking`, `tracking_click` (to `email`) and
 * `webhook_delivery` (to `event`) go; `deleteEmail` removes an email's rows itself. A DEFAULT
 * partition takes rows no day partition covers yet (maintenance creates days ahead), and
 * `postlane_add_day_partition` moves them into the day partition when it is made.
 */
export class Migration20261220000000_email_partitions extends Migration {
  override async up(): Promise<void> {
    for (const [table, column] of [
      ['email_recipient', 'email_id'],
      ['email_attachment', 'email_id'],
      ['email_tracking', 'email_id'],
      ['tracking_click', 'email_id'],
      ['event', 'email_id'],
      ['webhook_delivery', 'event_id'],
    ] as const) {
      this.addSql(`alter table "${table}" drop constraint "${table}_${column}_foreign";`);
    }
    // Tracking rows are few and small (one per opened email): retention deletes them by their own age.
    this.addSql(`alter table "email_tracking" add column "created_at" timestamptz(3) not null default now();`);
    this.addSql(`create index "email_tracking_created_at_idx" on "email_tracking" ("created_at");`);

    // Makes the partition of `parent` for one UTC day: built apart and attached (which locks the
    // parent less than CREATE … PARTITION OF), with the rows the DEFAULT partition holds for that
    // day moved in. False when it exists, or when the legacy partition covers the day.
    this
      .addSql(`create function postlane_add_day_partition(parent text, day date) returns boolean language plpgsql as $$
    declare
      part text := parent || '_p' || to_char(day, 'YYYYMMDD');
      lo timestamptz := day::timestamp at time zone 'UTC';
      hi timestamptz := (day + 1)::timestamp at time zone 'UTC';
    begin
      if to_regclass(part) is not null
         or exists (select 1 from pg_inherits i join pg_class c on c.oid = i.inhrelid
                     where i.inhparent = parent::regclass and c.relname = parent || '_legacy'
                       and (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz > lo) then
        return false;
      end if;
      execute format('create table %I (like %I including defaults including constraints including storage)', part, parent);
      execute format('alter table %I add primary key (id)', part);
      execute format('alter table %I add constraint %I check (created_at >= %L and created_at < %L)', part, part || '_range', lo, hi);
      execute format('with moved as (delete from %I where created_at >= %L and created_at < %L returning *) insert into %I select * from moved',
                     parent || '_default', lo, hi, part);
      execute format('alter table %I attach partition %I for values from (%L) to (%L)', parent, part, lo, hi);
      execute format('alter table %I drop constraint %I', part, part || '_range');
      return true;
    end $$;`);

    // The outbox claim's due rows, in due order, off the partial indexes `email_due_idx` of every
    // partition merged in order, so the LIMIT stops after the batch. Without enable_sort the planner
    // cannot choose to read every due row and sort them, which it would on statistics that expect
    // none due (a backlog added since the last ANALYZE): the plan does not depend on them.
    this.addSql(`create function postlane_due_emails(due_region text, only_ids uuid[], batch int)
      returns table (id uuid, created_at timestamptz, send_after timestamptz, body bigint)
      language sql volatile set enable_sort = off as $$
        select e.id, e.created_at, e.send_after, coalesce(octet_length(e.html), 0) + coalesce(octet_length(e.text), 0)
          from email e
         where e.status = 'queued' and e.region = due_region and e.send_after <= now() and (only_ids is null or e.id = any(only_ids))
         order by e.send_after limit batch for update skip locked
      $$;`);

    // Everything written so far stays in the legacy partitions: up to the end of the UTC day of the newest row, or of today.
    this.addSql(`create temporary table legacy_bound on commit drop as
      select (date_trunc('day', greatest(now(), (select max(created_at) from email), (select max(created_at) from event)) at time zone 'UTC')
              at time zone 'UTC') + interval '1 day' as bound;`);
    for (const [table, { indexes }] of Object.entries(PARTITIONED)) {
      const legacy = `${table}_legacy`;
      this.addSql(`alter table "${table}" rename to "${legacy}";`);
      this.addSql(`alter table "${legacy}" rename constraint "${table}_pkey" to "${legacy}_pkey";`);
      for (const index of Object.keys(indexes))
        this.addSql(`alter index "${index}" rename to "${index.replace(table, legacy)}";`);
      this.addSql(
        `create table "${table}" (like "${legacy}" including defaults including constraints including storage) partition by range ("created_at");`,
      );
      for (const [index, definition] of Object.entries(indexes))
        this.addSql(`create index "${index}" on "${table}" ${definition};`);
      this.addSql(`do $$ declare b timestamptz := (select bound from legacy_bound); begin
        execute format('alter table %I add constraint %I check (created_at < %L) not valid', '${legacy}', '${legacy}_range', b);
        execute format('alter table %I validate constraint %I', '${legacy}', '${legacy}_range');
        execute format('alter table %I attach partition %I for values from (minvalue) to (%L)', '${table}', '${legacy}', b);
        execute format('alter table %I drop constraint %I', '${legacy}', '${legacy}_range');
      end $$;`);
      this.addSql(`create table "${table}_default" partition of "${table}" default;`);
      this.addSql(`alter table "${table}_default" add primary key (id);`);
    }
    this.addSql(
      `alter table "email" add constraint "email_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
    // A fresh install can send at once; maintenance keeps days ahead from now on.
    this.addSql(`select postlane_add_day_partition(t, (d at time zone 'UTC')::date)
                   from unnest(array[${Object.keys(PARTITIONED)
                     .map((t) => `'${t}'`)
                     .join(', ')}]) t,
                        generate_series((select bound from legacy_bound), (select bound from legacy_bound) + interval '3 days', interval '1 day') d;`);
  }
}
