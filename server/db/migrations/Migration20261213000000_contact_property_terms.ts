import { Migration } from '@mikro-orm/migrations';

/**
 * A segment's `contact_count` for a property filter (`properties.plan eq pro`) scanned every
 * contact of the team: no index on `contact` can serve it (the key is chosen per segment, `eq` is
 * case-insensitive) and an index that only narrows the rows still reads every heap page when the
 * matches are spread out. `contact_property_term` holds one row per (contact, property value),
 * keyed by a hash of team, key and lower-cased value, so the count is an index-only scan over the
 * matching entries. The hash is SHA-256 cut to a uuid's 16 bytes (a third less disk than all 32; a
 * chance collision is out of reach at 128 bits). Statement-level triggers keep it in step with
 * every insert, update and delete of `contact`, in the same transaction, so the count stays exact.
 */
export class Migration20261213000000_contact_property_terms extends Migration {
  override async up(): Promise<void> {
    // The key's length keeps `a` + `bc` apart from `ab` + `c`; the value is read as `->>` reads it.
    this
      .addSql(`create function contact_property_term(team uuid, key text, value text) returns uuid language sql immutable parallel safe
      return encode(substring(sha256(convert_to(team::text || length(key) || ':' || key || lower(value), 'UTF8')) for 16), 'hex')::uuid;`);
    // Set-returning, so it is inlined into each trigger's statement (a call per contact cost twice as much).
    this
      .addSql(`create function contact_property_terms(team uuid, properties jsonb) returns setof uuid language sql immutable parallel safe as $$
      select contact_property_term(team, key, value)
        from jsonb_each_text(case jsonb_typeof(properties) when 'object' then properties else '{}' end)
       where value is not null
    $$;`);
    this.addSql(
      `create table "contact_property_term" ("term" uuid not null, "contact_id" uuid not null, constraint "contact_property_term_pkey" primary key ("term", "contact_id"));`,
    );
    this.addSql(`create function contact_property_terms_insert() returns trigger language plpgsql as $$
    begin
      insert into contact_property_term (term, contact_id) select t, n.id from new_rows n, contact_property_terms(n.team_id, n.properties) t;
      return null;
    end $$;`);
    this.addSql(`create function contact_property_terms_delete() returns trigger language plpgsql as $$
    begin
      delete from contact_property_term p using old_rows o, contact_property_terms(o.team_id, o.properties) t where p.term = t and p.contact_id = o.id;
      return null;
    end $$;`);
    // Only rows whose properties (or team) changed: a name or unsubscribe edit costs nothing here.
    this.addSql(`create function contact_property_terms_update() returns trigger language plpgsql as $$
    begin
      delete from contact_property_term p using old_rows o join new_rows n on n.id = o.id, contact_property_terms(o.team_id, o.properties) t
       where p.term = t and p.contact_id = o.id and (o.team_id, o.properties) is distinct from (n.team_id, n.properties);
      insert into contact_property_term (term, contact_id) select t, n.id from new_rows n join old_rows o on o.id = n.id, contact_property_terms(n.team_id, n.properties) t
       where (o.team_id, o.properties) is distinct from (n.team_id, n.properties);
      return null;
    end $$;`);
    this.addSql(
      `create trigger contact_property_terms_insert after insert on contact referencing new table as new_rows for each statement execute function contact_property_terms_insert();`,
    );
    this.addSql(
      `create trigger contact_property_terms_delete after delete on contact referencing old table as old_rows for each statement execute function contact_property_terms_delete();`,
    );
    this.addSql(
      `create trigger contact_property_terms_update after update on contact referencing old table as old_rows new table as new_rows for each statement execute function contact_property_terms_update();`,
    );
    this.addSql(
      `insert into contact_property_term (term, contact_id) select t, c.id from contact c, contact_property_terms(c.team_id, c.properties) t;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger contact_property_terms_insert on contact;`);
    this.addSql(`drop trigger contact_property_terms_delete on contact;`);
    this.addSql(`drop trigger contact_property_terms_update on contact;`);
    this.addSql(
      `drop function contact_property_terms_insert(), contact_property_terms_delete(), contact_property_terms_update();`,
    );
    this.addSql(`drop table "contact_property_term";`);
    this.addSql(`drop function contact_property_terms(uuid, jsonb), contact_property_term(uuid, text, text);`);
  }
}
