import { Migration } from '@mikro-orm/migrations';

/** When the event behind `last_event` happened, so outcomes arriving out of order cannot roll it back. */
export class Migration20261129000000_email_outcomes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "email" add column "last_event_at" timestamptz(3) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "email" drop column "last_event_at";`);
  }
}
