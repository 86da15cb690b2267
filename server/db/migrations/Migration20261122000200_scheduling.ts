import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000200_scheduling extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "email" drop constraint if exists "email_status_check";`);

    this.addSql(
      `alter table "email" add constraint "email_status_check" check("status" in ('queued', 'sending', 'sent', 'failed', 'canceled'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "email" drop constraint if exists "email_status_check";`);

    this.addSql(
      `alter table "email" add constraint "email_status_check" check("status" in ('queued', 'sending', 'sent', 'failed'));`,
    );
  }
}
