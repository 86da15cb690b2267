import { Migration } from '@mikro-orm/migrations';

/**
 * Direct delivery's source IP pools and warm-up: the pool a team's mail leaves from, and each
 * warming IP's messages per mailbox provider profile and UTC day, counted across every worker
 * host. A warm-up lasts weeks, so the table holds a few dozen rows per IP and profile at most.
 */
export class Migration20270111000000_ip_pools_warmup extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "team" add column "ip_pool" text null;`);
    this.addSql(
      `create table "warmup_count" ("source_ip" text not null, "profile" text not null, "day" date not null, "sent" int not null default 0, constraint "warmup_count_pkey" primary key ("source_ip", "profile", "day"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "warmup_count";`);
    this.addSql(`alter table "team" drop column if exists "ip_pool";`);
  }
}
