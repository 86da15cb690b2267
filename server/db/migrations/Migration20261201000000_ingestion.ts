import { Migration } from '@mikro-orm/migrations';

/** Provider notifications already applied (SNS dedupe), and provider events matched by the provider's message id. */
export class Migration20261201000000_ingestion extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "ingested_notification" ("source" text not null, "message_id" text not null, "topic" text not null, "received_at" timestamptz(3) not null, constraint "ingested_notification_pkey" primary key ("source", "message_id"));`,
    );
    this.addSql(`create index "ingested_notification_received_at_index" on "ingested_notification" ("received_at");`);
    this.addSql(`create index "email_provider_message_id_idx" on "email" ("provider_message_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "ingested_notification" cascade;`);
    this.addSql(`drop index "email_provider_message_id_idx";`);
  }
}
