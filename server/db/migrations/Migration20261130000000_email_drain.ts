import { Migration } from '@mikro-orm/migrations';

/**
 * Emails are sent by draining the outbox in batches (`email.drain` per region) instead of one
 * `email.send` job each: a partial index for the claim of due emails and for expired leases; the
 * per-email job rows go (their emails are still `queued`, and the first drain run takes them).
 */
export class Migration20261130000000_email_drain extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "email_due_idx" on "email" ("region", "send_after") where status = 'queued';`);
    this.addSql(`create index "email_lease_idx" on "email" ("region", "lease_expires_at") where status = 'sending';`);
    this.addSql(`delete from "agenda_jobs" where "name" = 'email.send';`);
    this.addSql(`drop index "agenda_jobs_email_send_idx";`);
    this.addSql(`insert into "agenda_jobs" ("name", "priority", "type", "next_run_at", "data")
      select 'email.drain', 0, 'normal', min("send_after"), jsonb_build_object('region', "region") from "email" where "status" in ('queued', 'sending') group by "region";`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `create index "agenda_jobs_email_send_idx" on "agenda_jobs" ((data->>'emailId')) where name = 'email.send';`,
    );
    this.addSql(`drop index "email_lease_idx";`);
    this.addSql(`drop index "email_due_idx";`);
  }
}
