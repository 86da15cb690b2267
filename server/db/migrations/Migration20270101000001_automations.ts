import { Migration } from '@mikro-orm/migrations';

/**
 * Automations and custom events (issue 37). An automation's graph lives in immutable versions; a
 * run keeps the version it started on. Every step a run reaches is a row: `pending` rows are due
 * now, `waiting` rows (delays, waits with a timeout) at `due_at`, and a wait without a timeout has
 * no due time at all. The engine claims due rows off the partial index `automation_run_step_due_idx`
 * in due order with SKIP LOCKED, as the outbox does, so the claim's cost does not grow with the
 * number of runs waiting.
 */
export class Migration20270101000001_automations extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "automation" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "status" text check ("status" in ('enabled', 'disabled')) not null default 'disabled', "version" int not null default 1, "trigger_events" text[] not null default '{}', constraint "automation_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "automation_team_listing_idx" on "automation" ("team_id", "created_at", "id");`);
    this.addSql(`create index "automation_enabled_idx" on "automation" ("team_id") where status = 'enabled';`);
    this.addSql(
      `alter table "automation" add constraint "automation_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `create table "automation_version" ("automation_id" uuid not null, "version" int not null, "created_at" timestamptz(3) not null, "steps" jsonb not null, "connections" jsonb not null, constraint "automation_version_pkey" primary key ("automation_id", "version"));`,
    );
    this.addSql(
      `alter table "automation_version" add constraint "automation_version_automation_id_foreign" foreign key ("automation_id") references "automation" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "automation_run" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "team_id" uuid not null, "automation_id" uuid not null, "version" int not null, "contact_id" uuid null, "status" text check ("status" in ('running', 'completed', 'failed', 'cancelled')) not null default 'running', "event" jsonb not null, "started_at" timestamptz(3) null, "completed_at" timestamptz(3) null, constraint "automation_run_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "automation_run_listing_idx" on "automation_run" ("automation_id", "created_at", "id");`);
    this.addSql(
      `create index "automation_run_contact_idx" on "automation_run" ("contact_id") where status = 'running';`,
    );
    this.addSql(`create index "automation_run_team_idx" on "automation_run" ("team_id");`);
    this.addSql(
      `create index "automation_run_finished_idx" on "automation_run" ("completed_at") where status <> 'running';`,
    );
    this.addSql(
      `alter table "automation_run" add constraint "automation_run_automation_id_foreign" foreign key ("automation_id") references "automation" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "automation_run" add constraint "automation_run_contact_id_foreign" foreign key ("contact_id") references "contact" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `create table "automation_run_step" ("id" uuid not null, "created_at" timestamptz(3) not null, "run_id" uuid not null, "key" text not null, "type" text not null, "status" text check ("status" in ('pending', 'running', 'completed', 'failed', 'skipped', 'waiting')) not null, "due_at" timestamptz(3) null, "contact_id" uuid null, "wait_event" text null, "received" jsonb null, "attempts" int not null default 0, "output" jsonb null, "error" jsonb null, "started_at" timestamptz(3) null, "completed_at" timestamptz(3) null, constraint "automation_run_step_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "automation_run_step_run_idx" on "automation_run_step" ("run_id", "created_at", "id");`);
    this.addSql(
      `create index "automation_run_step_due_idx" on "automation_run_step" ("due_at", "id") where status in ('pending', 'waiting') and due_at is not null;`,
    );
    this.addSql(
      `create index "automation_run_step_wait_idx" on "automation_run_step" ("contact_id", "wait_event") where status = 'waiting' and wait_event is not null;`,
    );
    this.addSql(
      `alter table "automation_run_step" add constraint "automation_run_step_run_id_foreign" foreign key ("run_id") references "automation_run" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "custom_event" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "schema" jsonb null, constraint "custom_event_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "custom_event" add constraint "custom_event_team_name_unique" unique ("team_id", "name");`,
    );
    this.addSql(`create index "custom_event_team_listing_idx" on "custom_event" ("team_id", "created_at", "id");`);
    this.addSql(
      `alter table "custom_event" add constraint "custom_event_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `create table "custom_event_record" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "contact_id" uuid null, "payload" jsonb not null default '{}', constraint "custom_event_record_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "custom_event_record_created_idx" on "custom_event_record" ("created_at");`);
    this.addSql(`create index "custom_event_record_team_idx" on "custom_event_record" ("team_id", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "custom_event_record" cascade;`);
    this.addSql(`drop table if exists "custom_event" cascade;`);
    this.addSql(`drop table if exists "automation_run_step" cascade;`);
    this.addSql(`drop table if exists "automation_run" cascade;`);
    this.addSql(`drop table if exists "automation_version" cascade;`);
    this.addSql(`drop table if exists "automation" cascade;`);
  }
}
