import { Migration } from '@mikro-orm/migrations';

/** API logs for GET /logs, and the recurring maintenance job taking over the idempotency purge. */
export class Migration20261122000500_api_logs_maintenance extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "api_log" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "api_key_id" uuid null, "method" text not null, "endpoint" text not null, "response_status" smallint not null, "duration_ms" int not null, "user_agent" text null, "request_body" jsonb null, "response_body" jsonb null, constraint "api_log_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "api_log_team_listing_idx" on "api_log" ("team_id", "created_at", "id");`);
    this.addSql(`create index "api_log_created_at_idx" on "api_log" ("created_at");`);

    this.addSql(
      `alter table "api_log" add constraint "api_log_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade;`,
    );

    // The hourly idempotency purge became part of \`maintenance.run\`; its recurring row would linger unrun.
    this.addSql(`delete from "agenda_jobs" where "name" = 'idempotency.purge';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "api_log" cascade;`);
  }
}
