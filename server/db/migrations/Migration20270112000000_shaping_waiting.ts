import { Migration } from '@mikro-orm/migrations';

/**
 * Direct delivery's connection slots shared fairly between worker hosts: the hosts refused a
 * connection lately, each counted as waiting for a few seconds.
 */
export class Migration20270112000000_shaping_waiting extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "shaping_state" add column "waiting" jsonb not null default '{}';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "shaping_state" drop column if exists "waiting";`);
  }
}
