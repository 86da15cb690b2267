import { Migration } from '@mikro-orm/migrations';

/**
 * Direct delivery's traffic shaping, one row per source IP and MX group, shared by every worker
 * host: the open connections' leases, the rate buckets' due times and the back-off. Every decision
 * updates its row, so a fill factor of 50 leaves each page room for the new row versions (HOT
 * updates: the key never changes, no index is touched).
 */
export class Migration20270107000000_shaping_state extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "shaping_state" ("source_ip" text not null, "mx_group" text not null, "profile" text not null, "leases" jsonb not null default '{}', "connection_due" timestamptz null, "message_due" timestamptz null, "hour_due" timestamptz null, "suspended_until" timestamptz(3) null, "backoff_level" int not null default 0, "backoff_changed_at" timestamptz(3) null, "recent_failures" jsonb not null default '[]', "deferrals" int not null default 0, "connection_failures" int not null default 0, "suspensions" int not null default 0, "last_deferral" text null, "last_deferral_at" timestamptz(3) null, constraint "shaping_state_pkey" primary key ("source_ip", "mx_group")) with (fillfactor = 50);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "shaping_state";`);
  }
}
