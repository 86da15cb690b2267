import { Migration } from '@mikro-orm/migrations';

/** Stored templates: the editable draft in columns, the published copy that sends use in `published`. */
export class Migration20261126000000_templates extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "template" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "name" text not null, "alias" text null, "subject" text null, "html" text not null, "text" text null, "variables" jsonb not null default '[]', "current_version_id" uuid not null, "published" jsonb null, "published_at" timestamptz(3) null, "updated_at" timestamptz(3) not null, constraint "template_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "template_team_listing_idx" on "template" ("team_id", "created_at", "id");`);
    this.addSql(`alter table "template" add constraint "template_team_alias_unique" unique ("team_id", "alias");`);

    this.addSql(
      `alter table "template" add constraint "template_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "template" cascade;`);
  }
}
