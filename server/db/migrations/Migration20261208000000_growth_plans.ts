import { Migration } from '@mikro-orm/migrations';

/**
 * `email_outbox_idx` (status, send_after) indexed every email ever sent, and took a new entry on
 * each insert, claim and settle. What it served is served by the partial indexes on the rows still
 * moving: `email_due_idx` (queued) and `email_lease_idx` (sending).
 */
export class Migration20261208000000_growth_plans extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index "email_outbox_idx";`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index "email_outbox_idx" on "email" ("status", "send_after");`);
  }
}
