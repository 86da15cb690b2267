import { Migration } from '@mikro-orm/migrations';

/**
 * Receiving (issue 27): a domain can receive mail, and mail the inbound listener accepts is kept
 * per team with its raw bytes, parsed fields, attachments and SPF/DKIM/DMARC verdicts.
 */
export class Migration20261225000000_receiving extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "domain" add column "receiving" boolean not null default false;`);
    // The listener's RCPT TO lookup: receiving domains by name, across teams.
    this.addSql(`create index "domain_receiving_name_idx" on "domain" ("name") where receiving;`);
    this.addSql(
      `create table "received_email" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "domain" text not null, "envelope_from" text not null, "received_for" text[] not null, "peer_ip" text not null, "helo" text not null, "message_id" text not null, "subject" text not null, "from" text not null, "to" text[] not null, "cc" text[] not null, "bcc" text[] not null, "reply_to" text[] not null, "headers" jsonb not null default '{}', "text" text null, "html" text null, "raw" bytea not null, "size" int not null, "parse_error" text null, "spf" jsonb not null, "dkim" jsonb not null, "dmarc" jsonb not null, constraint "received_email_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "received_email_team_listing_idx" on "received_email" ("team_id", "created_at", "id");`);
    this.addSql(`create index "received_email_created_idx" on "received_email" ("created_at");`);
    this.addSql(
      `alter table "received_email" add constraint "received_email_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
    this.addSql(
      `create table "received_attachment" ("id" uuid not null, "created_at" timestamptz(3) not null, "email_id" uuid not null, "position" int not null, "filename" text null, "content_type" text not null, "content_disposition" text null, "content_id" text null, "size" int not null, "content" bytea not null, constraint "received_attachment_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "received_attachment_email_id_index" on "received_attachment" ("email_id");`);
    this.addSql(
      `alter table "received_attachment" add constraint "received_attachment_email_id_foreign" foreign key ("email_id") references "received_email" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "received_attachment" cascade;`);
    this.addSql(`drop table if exists "received_email" cascade;`);
    this.addSql(`drop index "domain_receiving_name_idx";`);
    this.addSql(`alter table "domain" drop column "receiving";`);
  }
}
