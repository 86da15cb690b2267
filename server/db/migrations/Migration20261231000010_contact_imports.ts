import { Migration } from '@mikro-orm/migrations';

/**
 * Contact imports (issue 36): a CSV upload kept in 1 MiB chunks until its import ends, the import's
 * cursor (bytes and rows consumed, moved in the transaction of each batch) with its counts, and the
 * first rows it refused.
 */
export class Migration20261231000010_contact_imports extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "contact_import" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "status" text not null default 'queued', "file_name" text null, "file_size" bigint not null, "chunk_count" int not null, "delimiter" text not null, "header" jsonb not null, "column_map" jsonb not null, "on_conflict" text not null, "segments" jsonb not null default '[]', "topics" jsonb not null default '[]', "bytes_done" bigint not null default 0, "rows_done" int not null default 0, "created_count" int not null default 0, "updated_count" int not null default 0, "skipped_count" int not null default 0, "failed_count" int not null default 0, "failure" text null, "updated_at" timestamptz(3) not null, "completed_at" timestamptz(3) null, constraint "contact_import_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "contact_import_team_listing_idx" on "contact_import" ("team_id", "created_at", "id");`);
    this.addSql(
      `create index "contact_import_open_idx" on "contact_import" ("updated_at") where status in ('queued', 'in_progress');`,
    );
    this.addSql(
      `alter table "contact_import" add constraint "contact_import_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create table "contact_import_chunk" ("contact_import_id" uuid not null, "seq" int not null, "data" bytea not null, constraint "contact_import_chunk_pkey" primary key ("contact_import_id", "seq"));`,
    );
    this.addSql(
      `alter table "contact_import_chunk" add constraint "contact_import_chunk_contact_import_id_foreign" foreign key ("contact_import_id") references "contact_import" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create table "contact_import_error" ("id" uuid not null default postlane_uuid_v7(), "contact_import_id" uuid not null, "row" int not null, "email" text null, "message" text not null, constraint "contact_import_error_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "contact_import_error" add constraint "contact_import_error_row_unique" unique ("contact_import_id", "row");`,
    );
    this.addSql(`create index "contact_import_error_email_index" on "contact_import_error" ("email");`);
    this.addSql(
      `alter table "contact_import_error" add constraint "contact_import_error_contact_import_id_foreign" foreign key ("contact_import_id") references "contact_import" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "contact_import_error" cascade;`);
    this.addSql(`drop table if exists "contact_import_chunk" cascade;`);
    this.addSql(`drop table if exists "contact_import" cascade;`);
  }
}
