import { Migration } from '@mikro-orm/migrations';

/** Erasure requests keep their receipt, and pending ones are found by index. */
export class Migration20261128000000_erasure extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "erasure_request" add column "receipt" jsonb null;`);
    this.addSql(`create index "erasure_request_pending_idx" on "erasure_request" ("completed_at", "team_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "erasure_request_pending_idx";`);
    this.addSql(`alter table "erasure_request" drop column "receipt";`);
  }
}
