import { Migration } from '@mikro-orm/migrations';

export class Migration20261123000000_audience extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "segment" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "filter" jsonb not null default '{"match":"all","conditions":[]}', constraint "segment_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "segment_team_listing_idx" on "segment" ("team_id", "created_at", "id");`);

    this.addSql(
      `create table "erasure_request" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "email" text not null, "completed_at" timestamptz(3) null, constraint "erasure_request_pkey" primary key ("id"));`,
    );

    this.addSql(
      `create table "contact_property" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "key" text not null, "type" text check ("type" in ('string', 'number')) not null, "fallback_value" jsonb null, constraint "contact_property_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "contact_property" add constraint "contact_property_team_id_key_unique" unique ("team_id", "key");`,
    );

    this.addSql(
      `create table "contact" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "email" text not null, "first_name" text null, "last_name" text null, "unsubscribed" boolean not null default false, "properties" jsonb not null default '{}', "updated_at" timestamptz(3) not null, constraint "contact_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "contact_team_listing_idx" on "contact" ("team_id", "created_at", "id");`);
    this.addSql(`alter table "contact" add constraint "contact_team_id_email_unique" unique ("team_id", "email");`);

    this.addSql(
      `create table "segment_member" ("segment_id" uuid not null, "contact_id" uuid not null, "created_at" timestamptz(3) not null, constraint "segment_member_pkey" primary key ("segment_id", "contact_id"));`,
    );
    this.addSql(`create index "segment_member_contact_id_index" on "segment_member" ("contact_id");`);

    this.addSql(
      `create table "topic" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "description" text null, "default_subscription" text check ("default_subscription" in ('opt_in', 'opt_out')) not null, "visibility" text check ("visibility" in ('public', 'private')) not null default 'private', constraint "topic_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "topic_team_listing_idx" on "topic" ("team_id", "created_at", "id");`);

    this.addSql(
      `create table "contact_topic" ("contact_id" uuid not null, "topic_id" uuid not null, "subscription" text check ("subscription" in ('opt_in', 'opt_out')) not null, "updated_at" timestamptz(3) not null, constraint "contact_topic_pkey" primary key ("contact_id", "topic_id"));`,
    );
    this.addSql(`create index "contact_topic_topic_id_index" on "contact_topic" ("topic_id");`);

    this.addSql(
      `alter table "segment" add constraint "segment_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "erasure_request" add constraint "erasure_request_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "contact_property" add constraint "contact_property_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "contact" add constraint "contact_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "segment_member" add constraint "segment_member_segment_id_foreign" foreign key ("segment_id") references "segment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "segment_member" add constraint "segment_member_contact_id_foreign" foreign key ("contact_id") references "contact" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "topic" add constraint "topic_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "contact_topic" add constraint "contact_topic_contact_id_foreign" foreign key ("contact_id") references "contact" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "contact_topic" add constraint "contact_topic_topic_id_foreign" foreign key ("topic_id") references "topic" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "team" add column "contact_limit" int null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "segment_member" drop constraint "segment_member_segment_id_foreign";`);

    this.addSql(`alter table "segment_member" drop constraint "segment_member_contact_id_foreign";`);

    this.addSql(`alter table "contact_topic" drop constraint "contact_topic_contact_id_foreign";`);

    this.addSql(`alter table "contact_topic" drop constraint "contact_topic_topic_id_foreign";`);

    this.addSql(`drop table if exists "segment" cascade;`);

    this.addSql(`drop table if exists "erasure_request" cascade;`);

    this.addSql(`drop table if exists "contact_property" cascade;`);

    this.addSql(`drop table if exists "contact" cascade;`);

    this.addSql(`drop table if exists "segment_member" cascade;`);

    this.addSql(`drop table if exists "topic" cascade;`);

    this.addSql(`drop table if exists "contact_topic" cascade;`);

    this.addSql(`alter table "team" drop column "contact_limit";`);
  }
}
