import { Migration } from '@mikro-orm/migrations';

/** Webhook endpoints, their delivery outbox and attempt history; team owners for notices. */
export class Migration20261124000000_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "webhook_endpoint" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "url" text not null, "events" text[] not null, "status" text check ("status" in ('enabled', 'disabled')) not null, "secret" text not null, "previous_secret" text null, "previous_secret_expires_at" timestamptz(3) null, "consecutive_exhausted" int not null default 0, "disabled_at" timestamptz(3) null, "drain_lease_expires_at" timestamptz(3) null, "backlog_notice_at" timestamptz(3) null, "updated_at" timestamptz(3) not null, constraint "webhook_endpoint_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "webhook_endpoint_team_listing_idx" on "webhook_endpoint" ("team_id", "created_at", "id");`,
    );

    this.addSql(
      `create table "webhook_delivery" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "endpoint_id" uuid not null, "event_id" uuid not null, "type" text not null, "message_id" text not null, "body" text not null, "status" text check ("status" in ('pending', 'sending', 'delivered', 'retry', 'exhausted')) not null, "attempts" int not null default 0, "due_at" timestamptz(3) not null, "queued_at" timestamptz(3) not null, "lease_expires_at" timestamptz(3) null, "settled_at" timestamptz(3) null, "last_status_code" int null, "last_error" text null, "updated_at" timestamptz(3) not null, constraint "webhook_delivery_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "webhook_delivery_listing_idx" on "webhook_delivery" ("endpoint_id", "created_at", "id");`,
    );
    this.addSql(`create index "webhook_delivery_due_idx" on "webhook_delivery" ("endpoint_id", "status", "due_at");`);
    this.addSql(`create index "webhook_delivery_created_idx" on "webhook_delivery" ("created_at");`);
    this.addSql(
      `alter table "webhook_delivery" add constraint "webhook_delivery_event_endpoint_unique" unique ("event_id", "endpoint_id");`,
    );

    this.addSql(
      `create table "webhook_attempt" ("id" uuid not null, "created_at" timestamptz(3) not null, "delivery_id" uuid not null, "status_code" int null, "latency_ms" int not null, "error_class" text null, "response" text not null, "counted" boolean not null, constraint "webhook_attempt_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_attempt_listing_idx" on "webhook_attempt" ("delivery_id", "created_at", "id");`);

    this.addSql(
      `alter table "webhook_endpoint" add constraint "webhook_endpoint_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "webhook_delivery" add constraint "webhook_delivery_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "webhook_delivery" add constraint "webhook_delivery_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoint" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_delivery" add constraint "webhook_delivery_event_id_foreign" foreign key ("event_id") references "event" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "webhook_attempt" add constraint "webhook_attempt_delivery_id_foreign" foreign key ("delivery_id") references "webhook_delivery" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "team" add column "owner_emails" text[] not null default '{}';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "webhook_delivery" drop constraint "webhook_delivery_endpoint_id_foreign";`);

    this.addSql(`alter table "webhook_attempt" drop constraint "webhook_attempt_delivery_id_foreign";`);

    this.addSql(`drop table if exists "webhook_endpoint" cascade;`);

    this.addSql(`drop table if exists "webhook_delivery" cascade;`);

    this.addSql(`drop table if exists "webhook_attempt" cascade;`);

    this.addSql(`alter table "team" drop column "owner_emails";`);
  }
}
