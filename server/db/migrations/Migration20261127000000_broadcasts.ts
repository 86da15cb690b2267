import { Migration } from '@mikro-orm/migrations';

/** Broadcasts with their resumable expansion cursor, and the link from each recipient's email to its broadcast. */
export class Migration20261127000000_broadcasts extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "broadcast" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "name" text null, "segment_id" uuid not null, "from" text not null, "subject" text not null, "reply_to" text[] not null, "preview_text" text null, "html" text null, "text" text null, "topic_id" uuid null, "status" text check ("status" in ('draft', 'scheduled', 'queued', 'sending', 'sent', 'canceled')) not null, "region" text not null, "scheduled_at" timestamptz(3) null, "sent_at" timestamptz(3) null, "audience_size" int null, "cursor" uuid null, "expanded_count" int not null default 0, "skipped_count" int not null default 0, "expanded" boolean not null default false, "pace_per_second" int null, "next_batch_at" timestamptz(3) null, "canceled_at" timestamptz(3) null, "updated_at" timestamptz(3) not null, constraint "broadcast_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "broadcast_team_listing_idx" on "broadcast" ("team_id", "created_at", "id");`);
    this.addSql(`create index "broadcast_region_status_idx" on "broadcast" ("region", "status");`);

    this.addSql(
      `alter table "broadcast" add constraint "broadcast_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(`alter table "email" add column "broadcast_id" uuid null;`);
    this.addSql(`create index "email_broadcast_idx" on "email" ("broadcast_id", "status", "attempts");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "broadcast" cascade;`);

    this.addSql(`drop index "email_broadcast_idx";`);
    this.addSql(`alter table "email" drop column "broadcast_id";`);
  }
}
