import { Migration } from '@mikro-orm/migrations';

/** The address and names joined, as the trigram index and the segment counts read them (`CONTACT_TEXT` in segment-filter.ts). */
const CONTACT_TEXT = `"email" || ' ' || coalesce("first_name", '') || ' ' || coalesce("last_name", '')`;

/**
 * A property value's number, from its text (null when the text is no number). A number property only
 * holds JSON numbers, whose text always matches: their values read as the scan's `::numeric` reads them.
 */
const NUMBER = `case when value ~ '^\\s*[-+]?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?\\s*$' then value::numeric end`;

/** The properties of `rows` as (contact, team, key, value, term), as `contact_property_terms` reads them. */
const propertyTerms = (rows: string) =>
  `select r.id, r.team_id, e.key, e.value, contact_property_term(r.team_id, e.key, e.value) as term
     from ${rows} r, jsonb_each_text(case jsonb_typeof(r.properties) when 'object' then r.properties else '{}' end) e
    where e.value is not null`;

/** Adds the distinct values of `terms` (a CTE of `propertyTerms`) to `contact_property_value`; in term order, so concurrent writers cannot deadlock. */
const addValues = (terms: string) => `insert into contact_property_value (term, team_id, key, value, number)
    select distinct on (term) term, team_id, key, lower(value), ${NUMBER} from ${terms} order by term
    on conflict do nothing`;

/** Adds the deltas `select` answers (team, field, delta) to this backend's slots of `contact_field_tally`, in key order as `contact_tally_add`. */
const tallyFields = (select: string) => `insert into contact_field_tally as t (team_id, field, slot, contacts)
    select team_id, field, pg_backend_pid(), sum(delta) from (${select}) d group by team_id, field having sum(delta) <> 0 order by team_id, field
    on conflict (team_id, field, slot) do update set contacts = t.contacts + excluded.contacts`;

/** The fields each of `rows` holds a value in, named as a segment condition names them; written out, not a function, so it is planned with the statement. */
const fieldsOf = (rows: string, delta: number) =>
  `select r.team_id, f.field, ${delta} as delta from ${rows} r, lateral (
     select 'first_name' where r.first_name is not null
     union all select 'last_name' where r.last_name is not null
     union all select 'properties.' || k from jsonb_object_keys(case jsonb_typeof(r.properties) when 'object' then r.properties else '{}' end) k
   ) f(field)`;

/** The columns whose change moves a contact's terms or fields. */
const CHANGED = `(o.team_id, o.first_name is null, o.last_name is null, o.properties) is distinct from (n.team_id, n.first_name is null, n.last_name is null, n.properties)`;

/**
 * What a contact write costs for the segment counts (see Migration20270104000010_segment_counts),
 * cut to what the counts need:
 *
 * - `contact_property_value`: the team's distinct property values, one row per term of
 *   `contact_property_term` (lower-cased, with the number it reads as), added by the terms' own
 *   triggers. A property's `contains`, `starts_with`, `ends_with` and number comparisons match
 *   these few rows, then count their terms' contacts from the term index alone. It replaces the
 *   trigram index on the properties' JSON text (which indexed every contact's whole JSON) and
 *   `contact_property_number` (a row per contact and number). Values no contact holds any more
 *   stay until maintenance (`contact_tally`) purges them: they count nobody meanwhile.
 * - `contact_field_tally`: per team, how many contacts hold a value in each field (`first_name`,
 *   `last_name`, `properties.<key>`), in per-backend slots as `contact_tally`, so `exists` and
 *   `not_exists` are a sum.
 * - one trigram index over the address and names together instead of one each: a value in one of
 *   them is in the three joined, so it narrows each column's `contains` and `ends_with` (the
 *   column's own condition is checked on the rows it finds); a contact adds one index entry
 *   set instead of three.
 */
export class Migration20270105000010_segment_count_writes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`set local maintenance_work_mem = '256MB';`);
    this.addSql(
      `create table "contact_property_value" ("term" uuid not null, "team_id" uuid not null, "key" text not null, "value" text not null, "number" numeric null, constraint "contact_property_value_pkey" primary key ("term"));`,
    );
    this.addSql(`create index "contact_property_value_key_idx" on "contact_property_value" ("team_id", "key");`);
    this.addSql(
      `create table "contact_field_tally" ("team_id" uuid not null, "field" text not null, "slot" int not null, "contacts" bigint not null, constraint "contact_field_tally_pkey" primary key ("team_id", "field", "slot"));`,
    );
    this.addSql(`create or replace function contact_property_terms_insert() returns trigger language plpgsql as $$
    begin
      with v as materialized (${propertyTerms('new_rows')}),
      terms as (insert into contact_property_term (term, contact_id) select term, id from v)
      ${addValues('v')};
      ${tallyFields(fieldsOf('new_rows', 1))};
      return null;
    end $$;`);
    this.addSql(`create or replace function contact_property_terms_delete() returns trigger language plpgsql as $$
    begin
      delete from contact_property_term p using old_rows o, contact_property_terms(o.team_id, o.properties) t where p.term = t and p.contact_id = o.id;
      ${tallyFields(fieldsOf('old_rows', -1))};
      return null;
    end $$;`);
    // Only rows whose properties, names' presence or team changed: other edits cost nothing here.
    this.addSql(`create or replace function contact_property_terms_update() returns trigger language plpgsql as $$
    begin
      delete from contact_property_term p using old_rows o join new_rows n on n.id = o.id, contact_property_terms(o.team_id, o.properties) t
       where p.term = t and p.contact_id = o.id and (o.team_id, o.properties) is distinct from (n.team_id, n.properties);
      with v as materialized (${propertyTerms('(select n.* from new_rows n join old_rows o on o.id = n.id where (o.team_id, o.properties) is distinct from (n.team_id, n.properties))')}),
      terms as (insert into contact_property_term (term, contact_id) select term, id from v)
      ${addValues('v')};
      ${tallyFields(
        `${fieldsOf('(select o.* from old_rows o join new_rows n on n.id = o.id where ' + CHANGED + ')', -1)} union all ${fieldsOf('(select n.* from new_rows n join old_rows o on o.id = n.id where ' + CHANGED + ')', 1)}`,
      )};
      return null;
    end $$;`);
    this.addSql(
      `insert into contact_property_value (term, team_id, key, value, number) select distinct on (term) term, team_id, key, lower(value), ${NUMBER} from (${propertyTerms('contact')}) v order by term;`,
    );
    this.addSql(
      `insert into contact_field_tally (team_id, field, slot, contacts) select team_id, field, 0, count(*) from (${fieldsOf('contact', 1)}) f group by 1, 2;`,
    );

    this.addSql(`drop trigger contact_property_numbers_insert on contact;`);
    this.addSql(`drop trigger contact_property_numbers_delete on contact;`);
    this.addSql(`drop trigger contact_property_numbers_update on contact;`);
    this.addSql(
      `drop function contact_property_numbers_insert(), contact_property_numbers_delete(), contact_property_numbers_update();`,
    );
    this.addSql(`drop table "contact_property_number";`);
    this.addSql(`drop function contact_property_numbers(jsonb);`);

    this.addSql(`drop index "contact_properties_trgm_idx";`);
    this.addSql(`drop index "contact_email_trgm_idx";`);
    this.addSql(`drop index "contact_first_name_trgm_idx";`);
    this.addSql(`drop index "contact_last_name_trgm_idx";`);
    this.addSql(`create index "contact_text_trgm_idx" on "contact" using gin ((${CONTACT_TEXT}) gin_trgm_ops);`);
  }

  override async down(): Promise<void> {
    this.addSql(`set local maintenance_work_mem = '256MB';`);
    this.addSql(`drop index "contact_text_trgm_idx";`);
    this.addSql(`create index "contact_email_trgm_idx" on "contact" using gin ("email" gin_trgm_ops);`);
    this.addSql(`create index "contact_first_name_trgm_idx" on "contact" using gin ("first_name" gin_trgm_ops);`);
    this.addSql(`create index "contact_last_name_trgm_idx" on "contact" using gin ("last_name" gin_trgm_ops);`);
    this.addSql(
      `create index "contact_properties_trgm_idx" on "contact" using gin (("properties"::text) gin_trgm_ops);`,
    );

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

    this.addSql(`create or replace function contact_property_terms_insert() returns trigger language plpgsql as $$
    begin
      insert into contact_property_term (term, contact_id) select t, n.id from new_rows n, contact_property_terms(n.team_id, n.properties) t;
      return null;
    end $$;`);
    this.addSql(`create or replace function contact_property_terms_delete() returns trigger language plpgsql as $$
    begin
      delete from contact_property_term p using old_rows o, contact_property_terms(o.team_id, o.properties) t where p.term = t and p.contact_id = o.id;
      return null;
    end $$;`);
    this.addSql(`create or replace function contact_property_terms_update() returns trigger language plpgsql as $$
    begin
      delete from contact_property_term p using old_rows o join new_rows n on n.id = o.id, contact_property_terms(o.team_id, o.properties) t
       where p.term = t and p.contact_id = o.id and (o.team_id, o.properties) is distinct from (n.team_id, n.properties);
      insert into contact_property_term (term, contact_id) select t, n.id from new_rows n join old_rows o on o.id = n.id, contact_property_terms(n.team_id, n.properties) t
       where (o.team_id, o.properties) is distinct from (n.team_id, n.properties);
      return null;
    end $$;`);
    this.addSql(`drop table "contact_field_tally";`);
    this.addSql(`drop table "contact_property_value";`);
  }
}
