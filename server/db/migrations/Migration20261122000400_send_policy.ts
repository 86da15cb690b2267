import { Migration } from '@mikro-orm/migrations';

/** The suppression list, the team's sending pause, and an email's topic: what decides whether a send goes out. */
export class Migration20261122000400_send_policy extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "suppression" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "email" text null, "address_hash" bytea not null, "origin" text check ("origin" in ('bounce', 'complaint', 'manual', 'unsubscribe')) not null, "source" text null, "source_id" uuid null, constraint "suppression_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "suppression_team_listing_idx" on "suppression" ("team_id", "created_at", "id");`);
    this.addSql(
      `alter table "suppression" add constraint "suppression_team_address_unique" unique ("team_id", "address_hash");`,
    );

    this.addSql(
      `alter table "suppression" add constraint "suppression_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(`alter table "team" add column "sending_paused_at" timestamptz(3) null;`);

    this.addSql(`alter table "email" add column "topic_id" uuid null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "suppression" cascade;`);

    this.addSql(`alter table "email" drop column "topic_id";`);

    this.addSql(`alter table "team" drop column "sending_paused_at";`);
  }
}
