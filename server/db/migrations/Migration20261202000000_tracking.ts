import { Migration } from '@mikro-orm/migrations';

/** Open and click tracking: who opened each email, and the last minute of clicks that burst detection reads. */
export class Migration20261202000000_tracking extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "email_tracking" ("email_id" uuid not null, "opened_at" timestamptz(3) null, constraint "email_tracking_pkey" primary key ("email_id"));`,
    );

    this.addSql(
      `create table "tracking_click" ("id" uuid not null, "created_at" timestamptz(3) not null, "email_id" uuid not null, "link" text not null, "clicked_at" timestamptz(3) not null, "ip_address" text null, "user_agent" text null, "outcome" text check ("outcome" in ('clicked', 'prefetched', 'retracted')) not null, "opened_at" timestamptz(3) null, "previous_last_event" text null, "previous_last_event_at" timestamptz(3) null, constraint "tracking_click_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "tracking_click_email_time_idx" on "tracking_click" ("email_id", "clicked_at");`);

    this.addSql(
      `alter table "email_tracking" add constraint "email_tracking_email_id_foreign" foreign key ("email_id") references "email" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "tracking_click" add constraint "tracking_click_email_id_foreign" foreign key ("email_id") references "email" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "email_tracking" cascade;`);

    this.addSql(`drop table if exists "tracking_click" cascade;`);
  }
}
