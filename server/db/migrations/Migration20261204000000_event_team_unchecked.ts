import { Migration } from '@mikro-orm/migrations';

/**
 * Events no longer check their team with a foreign key: the check ran once per row (a third of the
 * event INSERT of a 1,000-contact import). An event is written in the transaction of the change it
 * reports, with that row's team, which is itself checked; teams are never deleted.
 */
export class Migration20261204000000_event_team_unchecked extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "event" drop constraint "event_team_id_foreign";`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "event" add constraint "event_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );
  }
}
