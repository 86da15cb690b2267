import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000_email_content extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "email_attachment" ("id" uuid not null, "created_at" timestamptz(3) not null, "email_id" uuid not null, "position" int not null, "filename" text not null, "content_type" text null, "content" bytea not null, "size" int not null, constraint "email_attachment_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "email_attachment_email_id_index" on "email_attachment" ("email_id");`);

    this.addSql(
      `alter table "email_attachment" add constraint "email_attachment_email_id_foreign" foreign key ("email_id") references "email" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "email" add column "headers" jsonb not null default '{}', add column "tags" jsonb not null default '[]';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "email_attachment" cascade;`);

    this.addSql(`alter table "email" drop column "headers", drop column "tags";`);
  }
}
