import { Migration } from '@mikro-orm/migrations';

/** A team's unsubscribed contacts, which a broadcast's `unsubscribed` recipients page gathers at once. */
export class Migration20270102000010_unsubscribed_contacts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "contact_unsubscribed_idx" on "contact" ("team_id", "email") where unsubscribed;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "contact_unsubscribed_idx";`);
  }
}
