import { Migration } from '@mikro-orm/migrations';

/** Recipient domains' MTA-STS policies, cached for every worker host (direct delivery). */
export class Migration20270106004000_mta_sts_policy extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "mta_sts_policy" ("domain" text not null, "policy_id" text not null, "mode" text check ("mode" in ('enforce', 'testing', 'none')) not null, "mx" text[] not null, "max_age" int not null, "fetched_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, constraint "mta_sts_policy_pkey" primary key ("domain"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mta_sts_policy";`);
  }
}
