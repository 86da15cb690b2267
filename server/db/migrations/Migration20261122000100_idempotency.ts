import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000100_idempotency extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "idempotency_key" ("team_id" uuid not null, "key" text not null check (char_length("key") between 1 and 256), "request_hash" bytea not null, "state" text check ("state" in ('running', 'done')) not null, "status_code" int null, "response" jsonb null, "created_at" timestamptz(3) not null, constraint "idempotency_key_pkey" primary key ("team_id", "key"));`,
    );
    this.addSql(`create index "idempotency_key_created_at_index" on "idempotency_key" ("created_at");`);

    this.addSql(
      `alter table "idempotency_key" add constraint "idempotency_key_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_key" cascade;`);
  }
}
