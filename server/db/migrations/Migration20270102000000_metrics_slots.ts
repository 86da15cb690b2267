import { Migration } from '@mikro-orm/migrations';

/** The rollup's per-backend slot rows, which maintenance folds into slot 0 once their hour has passed. */
export class Migration20270102000000_metrics_slots extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "email_metrics_hourly_slots_idx" on "email_metrics_hourly" ("hour") where slot <> 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "email_metrics_hourly_slots_idx";`);
  }
}
