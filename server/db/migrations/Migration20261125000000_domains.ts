import { Migration } from '@mikro-orm/migrations';

export class Migration20261125000000_domains extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "domain" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "region" text not null, "status" text check ("status" in ('pending', 'verified', 'partially_verified', 'failed', 'temporary_failure')) not null, "open_tracking" boolean not null default false, "click_tracking" boolean not null default false, "tracking_subdomain" text not null default 'links', "records" jsonb not null, "dkim_selector" text null, "dkim_private_key" text null, "verified_at" timestamptz(3) null, "last_checked_at" timestamptz(3) null, "next_check_at" timestamptz(3) null, "check_attempts" int not null default 0, "checking_since" timestamptz(3) null, "updated_at" timestamptz(3) not null, constraint "domain_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "domain_next_check_idx" on "domain" ("next_check_at");`);
    this.addSql(`alter table "domain" add constraint "domain_team_name_unique" unique ("team_id", "name");`);

    this.addSql(
      `alter table "domain" add constraint "domain_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "domain" cascade;`);
  }
}
