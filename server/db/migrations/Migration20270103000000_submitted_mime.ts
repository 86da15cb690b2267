import { Migration } from '@mikro-orm/migrations';

/**
 * An email submitted over SMTP keeps the message as submitted, which is what goes out (signed on
 * the way); the drain's batch budget counts it like a body.
 */
export class Migration20270103000000_submitted_mime extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "email" add column "raw_mime" bytea null;`);
    this.addSql(`create or replace function postlane_due_emails(due_region text, only_ids uuid[], batch int)
      returns table (id uuid, created_at timestamptz, send_after timestamptz, body bigint)
      language sql volatile set enable_sort = off as $$
        select e.id, e.created_at, e.send_after,
               coalesce(octet_length(e.html), 0) + coalesce(octet_length(e.text), 0) + coalesce(octet_length(e.raw_mime), 0)
          from email e
         where e.status = 'queued' and e.region = due_region and e.send_after <= now() and (only_ids is null or e.id = any(only_ids))
         order by e.send_after limit batch for update skip locked
      $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`create or replace function postlane_due_emails(due_region text, only_ids uuid[], batch int)
      returns table (id uuid, created_at timestamptz, send_after timestamptz, body bigint)
      language sql volatile set enable_sort = off as $$
        select e.id, e.created_at, e.send_after, coalesce(octet_length(e.html), 0) + coalesce(octet_length(e.text), 0)
          from email e
         where e.status = 'queued' and e.region = due_region and e.send_after <= now() and (only_ids is null or e.id = any(only_ids))
         order by e.send_after limit batch for update skip locked
      $$;`);
    this.addSql(`alter table "email" drop column "raw_mime";`);
  }
}
