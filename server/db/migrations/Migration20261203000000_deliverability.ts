import { Migration } from '@mikro-orm/migrations';

/** Deliverability protection: per-day sent/bounce/complaint counters, team episodes, region broadcast pauses. */
export class Migration20261203000000_deliverability extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "region_broadcast_pause" ("region" text not null, "metric" text check ("metric" in ('bounce_rate', 'complaint_rate')) not null, "paused_at" timestamptz(3) not null, "rate" double precision not null, constraint "region_broadcast_pause_pkey" primary key ("region", "metric"));`,
    );

    this.addSql(
      `create table "deliverability_episode" ("team_id" uuid not null, "metric" text check ("metric" in ('bounce_rate', 'complaint_rate')) not null, "warned_at" timestamptz(3) not null, "paused_at" timestamptz(3) null, "lifted_until" timestamptz(3) null, constraint "deliverability_episode_pkey" primary key ("team_id", "metric"));`,
    );

    this.addSql(
      `create table "deliverability_day" ("team_id" uuid not null, "day" date not null, "region" text not null, "shard" smallint not null, "sent" int not null default 0, "bounced" int not null default 0, "complained" int not null default 0, constraint "deliverability_day_pkey" primary key ("team_id", "day", "region", "shard"));`,
    );
    this.addSql(`create index "deliverability_day_day_idx" on "deliverability_day" ("day");`);

    this.addSql(
      `alter table "deliverability_episode" add constraint "deliverability_episode_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "deliverability_day" add constraint "deliverability_day_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "region_broadcast_pause" cascade;`);

    this.addSql(`drop table if exists "deliverability_episode" cascade;`);

    this.addSql(`drop table if exists "deliverability_day" cascade;`);
  }
}
