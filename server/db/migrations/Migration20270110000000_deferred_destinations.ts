import { Migration } from '@mikro-orm/migrations';

/**
 * Where a deferred email is waiting to go: the recipient domains refused for now at its last
 * attempt, and their MX groups (direct delivery), so `postlane queue retry|purge` and resuming a
 * group find its mail by index rather than by scanning recipients. The indexes are partial: only
 * queued rows with a deferral are in them, so mail that is delivered at once never touches them.
 * On the shaping state, the group alone is indexed: settling a deferral looks up its group's
 * suspension (the column never changes, so the state's updates stay HOT).
 */
export class Migration20270110000000_deferred_destinations extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "email" add column "deferred_domains" text[] null, add column "deferred_groups" text[] null;`,
    );
    for (const column of ['deferred_domains', 'deferred_groups'])
      this.addSql(
        `create index "email_${column}_idx" on "email" using gin ("${column}") where status = 'queued' and "${column}" is not null;`,
      );
    this.addSql(`create index "shaping_state_mx_group_idx" on "shaping_state" ("mx_group");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "shaping_state_mx_group_idx";`);
    this.addSql(`alter table "email" drop column "deferred_domains", drop column "deferred_groups";`);
  }
}
