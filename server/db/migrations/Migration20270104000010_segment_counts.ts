import { Migration } from '@mikro-orm/migrations';

/**
 * What a segment's `contact_count` reads instead of scanning the team's contacts (see
 * `segmentCount`):
 *
 * - `contact_tally`: the team's number of contacts, so `neq`, `not_contains`, a topic's default and
 *   `unsubscribed eq false` are a total minus a small count. One row per team and backend
 *   (`pg_backend_pid()`, as the metrics rollup's slots), kept by statement-level triggers in the
 *   writing transaction, so the sum is exact and concurrent writers never wait on one row; the
 *   maintenance task `contact_tally` folds the slots into slot 0.
 * - trigram indexes (`pg_trgm`) on the address, the names and the properties' JSON text, which
 *   narrow `contains` and `ends_with` (and a property's `starts_with`) to the candidate rows, and
 *   b-trees on the lower-cased address and names (`text_pattern_ops`), which serve `eq` and
 *   `starts_with` as a range: a trigram index reads the whole posting list of a trigram every
 *   contact shares (`exa` of `example.com`), a b-tree only the matching range;
 * - `contact_property_number`: one row per (contact, number value), kept by statement-level triggers as
 *   `contact_property_term` is, so a number property's comparison is an index-only range count
 *   (property keys are the team's own: no expression index on `contact` could name them);
 * - `contact_topic (topic_id, subscription)`: a topic's explicit choices counted from the index alone
 *   (the unsubscribed contacts already have `contact_unsubscribed_idx`).
 *
 * The indexes are built by plain `CREATE INDEX` inside the migration's transaction (CONCURRENTLY
 * cannot run in one): writes to `contact` wait for the build, reads do not, and a server refuses
 * to start while a migration is pending anyway, so the upgrade's downtime is the build's time
 * (about 30 s per million contacts on a loaded 2-core machine). `pg_trgm` is a trusted extension: the
 * database's owner (the `postlane` role install.sh creates) may create it without being superuser.
 */
export class Migration20270104000010_segment_counts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
    this.addSql(`set local maintenance_work_mem = '256MB';`);

    this.addSql(
      `create table "contact_tally" ("team_id" uuid not null, "slot" int not null, "contacts" bigint not null, constraint "contact_tally_pkey" primary key ("team_id", "slot"));`,
    );
    this.addSql(`create function contact_tally_add(team uuid, delta bigint) returns void language sql as $$
      insert into contact_tally as t (team_id, slot, contacts) values (team, pg_backend_pid(), delta)
      on conflict (team_id, slot) do update set contacts = t.contacts + excluded.contacts
    $$;`);
    this.addSql(`create function contact_tally_insert() returns trigger language plpgsql as $$
    begin
      perform contact_tally_add(team_id, count(*)) from new_rows group by team_id order by team_id;
      return null;
    end $$;`);
    this.addSql(`create function contact_tally_delete() returns trigger language plpgsql as $$
    begin
      perform contact_tally_add(team_id, -count(*)) from old_rows group by team_id order by team_id;
      return null;
    end $$;`);
    this.addSql(`create function contact_tally_move() returns trigger language plpgsql as $$
    begin
      perform contact_tally_add(old.team_id, -1), contact_tally_add(new.team_id, 1);
      return null;
    end $$;`);
    this.addSql(
      `create trigger contact_tally_insert after insert on contact referencing new table as new_rows for each statement execute function contact_tally_insert();`,
    );
    this.addSql(
      `create trigger contact_tally_delete after delete on contact referencing old table as old_rows for each statement execute function contact_tally_delete();`,
    );
    // A contact changes team only by an explicit `SET team_id`: the trigger costs nothing to other updates.
    this.addSql(
      `create trigger contact_tally_move after update of team_id on contact for each row when (old.team_id is distinct from new.team_id) execute function contact_tally_move();`,
    );
    this.addSql(
      `insert into contact_tally (team_id, slot, contacts) select team_id, 0, count(*) from contact group by team_id;`,
    );

    // JSON numbers only: a number property holds nothing else (contact writes check the type).
    this
      .addSql(`create function contact_property_numbers(properties jsonb) returns table (key text, value numeric) language sql immutable parallel safe as $$
      select key, value::text::numeric from jsonb_each(case jsonb_typeof(properties) when 'object' then properties else '{}' end)
       where jsonb_typeof(value) = 'number'
    $$;`);
    this.addSql(
      `create table "contact_property_number" ("contact_id" uuid not null, "key" text not null, "team_id" uuid not null, "value" numeric not null, constraint "contact_property_number_pkey" primary key ("contact_id", "key"));`,
    );
    this.addSql(
      `create index "contact_property_number_value_idx" on "contact_property_number" ("team_id", "key", "value");`,
    );
    this.addSql(`create function contact_property_numbers_insert() returns trigger language plpgsql as $$
    begin
      insert into contact_property_number (contact_id, key, team_id, value) select n.id, t.key, n.team_id, t.value from new_rows n, contact_property_numbers(n.properties) t;
      return null;
    end $$;`);
    this.addSql(`create function contact_property_numbers_delete() returns trigger language plpgsql as $$
    begin
      delete from contact_property_number p using old_rows o where p.contact_id = o.id;
      return null;
    end $$;`);
    // Only rows whose properties (or team) changed, as contact_property_terms_update.
    this.addSql(`create function contact_property_numbers_update() returns trigger language plpgsql as $$
    begin
      delete from contact_property_number p using old_rows o join new_rows n on n.id = o.id
       where p.contact_id = o.id and (o.team_id, o.properties) is distinct from (n.team_id, n.properties);
      insert into contact_property_number (contact_id, key, team_id, value) select n.id, t.key, n.team_id, t.value
        from new_rows n join old_rows o on o.id = n.id, contact_property_numbers(n.properties) t
       where (o.team_id, o.properties) is distinct from (n.team_id, n.properties);
      return null;
    end $$;`);
    this.addSql(
      `create trigger contact_property_numbers_insert after insert on contact referencing new table as new_rows for each statement execute function contact_property_numbers_insert();`,
    );
    this.addSql(
      `create trigger contact_property_numbers_delete after delete on contact referencing old table as old_rows for each statement execute function contact_property_numbers_delete();`,
    );
    this.addSql(
      `create trigger contact_property_numbers_update after update on contact referencing old table as old_rows new table as new_rows for each statement execute function contact_property_numbers_update();`,
    );
    this.addSql(
      `insert into contact_property_number (contact_id, key, team_id, value) select c.id, t.key, c.team_id, t.value from contact c, contact_property_numbers(c.properties) t;`,
    );

    this.addSql(`create index "contact_email_trgm_idx" on "contact" using gin ("email" gin_trgm_ops);`);
    this.addSql(`create index "contact_first_name_trgm_idx" on "contact" using gin ("first_name" gin_trgm_ops);`);
    this.addSql(`create index "contact_last_name_trgm_idx" on "contact" using gin ("last_name" gin_trgm_ops);`);
    // The properties' JSON text: a value holding `v` holds it there too, verbatim when `v` has nothing JSON escapes.
    this.addSql(
      `create index "contact_properties_trgm_idx" on "contact" using gin (("properties"::text) gin_trgm_ops);`,
    );
    for (const column of ['email', 'first_name', 'last_name'])
      this.addSql(
        `create index "contact_${column}_prefix_idx" on "contact" ("team_id", lower("${column}") text_pattern_ops);`,
      );
    this.addSql(`create index "contact_topic_subscription_idx" on "contact_topic" ("topic_id", "subscription");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "contact_topic_subscription_idx";`);
    for (const column of ['email', 'first_name', 'last_name'])
      this.addSql(`drop index "contact_${column}_prefix_idx";`);
    this.addSql(`drop index "contact_properties_trgm_idx";`);
    this.addSql(`drop index "contact_last_name_trgm_idx";`);
    this.addSql(`drop index "contact_first_name_trgm_idx";`);
    this.addSql(`drop index "contact_email_trgm_idx";`);
    this.addSql(`drop trigger contact_property_numbers_insert on contact;`);
    this.addSql(`drop trigger contact_property_numbers_delete on contact;`);
    this.addSql(`drop trigger contact_property_numbers_update on contact;`);
    this.addSql(
      `drop function contact_property_numbers_insert(), contact_property_numbers_delete(), contact_property_numbers_update();`,
    );
    this.addSql(`drop table "contact_property_number";`);
    this.addSql(`drop function contact_property_numbers(jsonb);`);
    this.addSql(`drop trigger contact_tally_insert on contact;`);
    this.addSql(`drop trigger contact_tally_delete on contact;`);
    this.addSql(`drop trigger contact_tally_move on contact;`);
    this.addSql(`drop function contact_tally_insert(), contact_tally_delete(), contact_tally_move();`);
    this.addSql(`drop function contact_tally_add(uuid, bigint);`);
    this.addSql(`drop table "contact_tally";`);
  }
}
