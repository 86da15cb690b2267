import { Migration } from '@mikro-orm/migrations';

/** Plans, usage counters, quota notices and rate-limit windows. */
export class Migration20261122000600_usage extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "rate_limit_window" ("team_id" uuid not null, "window_start" timestamptz(3) not null, "requests" int not null, constraint "rate_limit_window_pkey" primary key ("team_id"));`,
    );

    this.addSql(
      `create table "quota_notice" ("team_id" uuid not null, "event" text not null, "period_start" timestamptz(3) not null, constraint "quota_notice_pkey" primary key ("team_id", "event", "period_start"));`,
    );

    this.addSql(
      `create table "team_daily_usage" ("team_id" uuid not null, "day" date not null, "shard" smallint not null, "accepted" int not null default 0, "parked" int not null default 0, constraint "team_daily_usage_pkey" primary key ("team_id", "day", "shard"));`,
    );

    this.addSql(
      `alter table "rate_limit_window" add constraint "rate_limit_window_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "quota_notice" add constraint "quota_notice_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(
      `alter table "team_daily_usage" add constraint "team_daily_usage_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    this.addSql(`create index "event_team_created_idx" on "event" ("team_id", "created_at");`);
    this.addSql(
      `alter table "team" add column "plan" text check ("plan" in ('free', 'starter', 'pro', 'scale')) null, add column "overage_enabled" boolean not null default false;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "rate_limit_window" cascade;`);

    this.addSql(`drop table if exists "quota_notice" cascade;`);

    this.addSql(`drop table if exists "team_daily_usage" cascade;`);

    this.addSql(`drop index "event_team_created_idx";`);
    this.addSql(`alter table "team" drop column "plan", drop column "overage_enabled";`);
  }
}
