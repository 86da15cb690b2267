import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "captured_message" ("id" uuid not null, "created_at" timestamptz(3) not null, "region" text not null, "message_id" text not null, "envelope_from" text not null, "envelope_to" text[] not null, "subject" text not null, "raw" text not null, constraint "captured_message_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "captured_message_message_id_index" on "captured_message" ("message_id");`);
    this.addSql(`create index "captured_message_created_idx" on "captured_message" ("created_at", "id");`);

    this.addSql(
      `create table "team" ("id" uuid not null, "created_at" timestamptz(3) not null, "name" text not null, constraint "team_pkey" primary key ("id"));`,
    );

    this.addSql(
      `create table "email" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "from" text not null, "to" text[] not null, "cc" text[] not null, "bcc" text[] not null, "reply_to" text[] not null, "subject" text not null, "html" text null, "text" text null, "region" text not null, "message_id" text not null, "status" text check ("status" in ('queued', 'sending', 'sent', 'failed')) not null, "last_event" text check ("last_event" in ('queued', 'scheduled', 'sent', 'delivered', 'delivery_delayed', 'bounced', 'complained', 'opened', 'clicked', 'canceled', 'failed', 'suppressed')) not null, "send_after" timestamptz(3) not null, "scheduled_at" timestamptz(3) null, "lease_expires_at" timestamptz(3) null, "attempts" int not null default 0, "provider_message_id" text null, "last_error" text null, "sent_at" timestamptz(3) null, "updated_at" timestamptz(3) not null, constraint "email_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "email_team_listing_idx" on "email" ("team_id", "created_at", "id");`);
    this.addSql(`create index "email_outbox_idx" on "email" ("status", "send_after");`);

    this.addSql(
      `create table "email_recipient" ("id" uuid not null, "created_at" timestamptz(3) not null, "email_id" uuid not null, "kind" text check ("kind" in ('to', 'cc', 'bcc')) not null, "address" text not null, "status" text check ("status" in ('pending', 'accepted', 'rejected')) not null, "response" text null, constraint "email_recipient_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "email_recipient_email_id_index" on "email_recipient" ("email_id");`);

    this.addSql(
      `create table "email_event" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "email_id" uuid not null, "type" text not null, "payload" jsonb not null, constraint "email_event_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "email_event_email_id_index" on "email_event" ("email_id");`);

    this.addSql(
      `create table "api_key" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "permission" text check ("permission" in ('full_access', 'sending_access')) not null, "domain_id" uuid null, "token_hash" bytea not null, "token_hint" text not null, "last_used_at" timestamptz(3) null, "revoked_at" timestamptz(3) null, constraint "api_key_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "api_key_team_id_index" on "api_key" ("team_id");`);
    this.addSql(`alter table "api_key" add constraint "api_key_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `alter table "email" add constraint "email_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "email_recipient" add constraint "email_recipient_email_id_foreign" foreign key ("email_id") references "email" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "email_event" add constraint "email_event_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "email_event" add constraint "email_event_email_id_foreign" foreign key ("email_id") references "email" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "api_key" add constraint "api_key_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
    // agenda_jobs as @agendajs/postgres-backend 3.0.6 creates it (schema.ts: table, column migrations,
    // indexes, updated_at trigger). We create it here and run Agenda with ensureSchema: false, because
    // two processes first-booting on an empty database race in its own DDL. Compare on every upgrade.
    this.addSql(`create table "agenda_jobs" (
      id uuid primary key default gen_random_uuid(),
      name varchar(255) not null,
      priority integer not null default 0,
      next_run_at timestamptz,
      type varchar(10) not null default 'normal' check (type in ('normal', 'single')),
      locked_at timestamptz,
      last_finished_at timestamptz,
      failed_at timestamptz,
      fail_count integer default null,
      fail_reason text,
      repeat_timezone varchar(100),
      last_run_at timestamptz,
      repeat_interval varchar(255),
      data jsonb default '{}'::jsonb,
      repeat_at varchar(255),
      disabled boolean default false,
      progress real,
      fork boolean default false,
      last_modified_by varchar(255),
      debounce_started_at timestamptz,
      start_date timestamptz,
      end_date timestamptz,
      skip_days jsonb,
      created_at timestamptz default now(),
      updated_at timestamptz default now()
    );`);
    this.addSql(
      `create index "agenda_jobs_find_and_lock_idx" on "agenda_jobs" (name, next_run_at, priority desc, locked_at, disabled) where disabled = false;`,
    );
    this.addSql(`create unique index "agenda_jobs_single_job_idx" on "agenda_jobs" (name) where type = 'single';`);
    this.addSql(`create index "agenda_jobs_locked_at_idx" on "agenda_jobs" (locked_at) where locked_at is not null;`);
    this.addSql(
      `create index "agenda_jobs_next_run_at_idx" on "agenda_jobs" (next_run_at) where next_run_at is not null;`,
    );
    // Ours: lets the outbox sweeper ask "does this email already have a live job?" cheaply.
    this.addSql(
      `create index "agenda_jobs_email_send_idx" on "agenda_jobs" ((data->>'emailId')) where name = 'email.send';`,
    );
    this.addSql(`create or replace function update_agenda_jobs_updated_at() returns trigger as $$
      begin
        new.updated_at = now();
        return new;
      end;
      $$ language plpgsql;`);
    this.addSql(
      `create trigger "agenda_jobs_updated_at_trigger" before update on "agenda_jobs" for each row execute function update_agenda_jobs_updated_at();`,
    );
  }
}
