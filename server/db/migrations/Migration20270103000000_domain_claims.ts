import { Migration } from '@mikro-orm/migrations';

/**
 * Domain claims (issues 33 and 36): a domain name has one owner across the appliance, and a team
 * takes it over from another with a claim proven by a TXT record. A claim's placeholder domain is
 * a `domain` row marked `claiming`.
 */
export class Migration20270103000000_domain_claims extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "domain" add column "claiming" boolean not null default false;`);
    this.addSql(`create index "domain_name_idx" on "domain" ("name");`);
    this.addSql(
      `create table "domain_claim" ("id" uuid not null, "created_at" timestamptz(3) not null, "team_id" uuid not null, "domain_id" uuid null, "name" text not null, "region" text not null, "status" text check ("status" in ('pending', 'verified', 'completed', 'blocked', 'expired', 'superseded', 'canceled', 'failed')) not null, "token" text not null, "blocked_reason" text check ("blocked_reason" in ('grace_period', 'recent_owner_activity', 'pending_scheduled_emails')) null, "failure_reason" text null, "expires_at" timestamptz(3) not null, "completed_at" timestamptz(3) null, constraint "domain_claim_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "domain_claim_domain_idx" on "domain_claim" ("domain_id", "created_at");`);
    this.addSql(`create index "domain_claim_name_idx" on "domain_claim" ("name", "completed_at");`);
    this.addSql(
      `alter table "domain_claim" add constraint "domain_claim_team_id_foreign" foreign key ("team_id") references "team" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "domain_claim" add constraint "domain_claim_domain_id_foreign" foreign key ("domain_id") references "domain" ("id") on update cascade on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "domain_claim" cascade;`);
    this.addSql(`drop index "domain_name_idx";`);
    this.addSql(`alter table "domain" drop column "claiming";`);
  }
}
