import { Migration } from '@mikro-orm/migrations';

/** email_event becomes event: one table for every event a team's webhooks can receive. */
export class Migration20261122000300_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "email_event" rename to "event";`);
    this.addSql(`alter table "event" rename constraint "email_event_pkey" to "event_pkey";`);
    this.addSql(`alter table "event" rename constraint "email_event_team_id_foreign" to "event_team_id_foreign";`);
    this.addSql(`alter table "event" rename constraint "email_event_email_id_foreign" to "event_email_id_foreign";`);
    this.addSql(`alter index "email_event_email_id_index" rename to "event_email_id_index";`);
    this.addSql(`alter table "event" alter column "email_id" drop not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "event" where "email_id" is null;`);
    this.addSql(`alter table "event" alter column "email_id" set not null;`);
    this.addSql(`alter index "event_email_id_index" rename to "email_event_email_id_index";`);
    this.addSql(`alter table "event" rename constraint "event_email_id_foreign" to "email_event_email_id_foreign";`);
    this.addSql(`alter table "event" rename constraint "event_team_id_foreign" to "email_event_team_id_foreign";`);
    this.addSql(`alter table "event" rename constraint "event_pkey" to "email_event_pkey";`);
    this.addSql(`alter table "event" rename to "email_event";`);
  }
}
