import { Migration } from '@mikro-orm/migrations';

/**
 * Email metrics and broadcast analytics (issue 36), kept as the events are written.
 *
 * - `email_metrics_hourly`: per team, UTC hour, sender domain and broadcast, the counts that
 *   `GET /emails/metrics` and `postlane usage` sum. Counts only ever grow with the events (deleting
 *   an email, retention and erasure leave them alone), so history outlives the emails.
 * - `email_engagement`: per email, its first standing open and click (the unique metrics).
 * - `broadcast_recipient`, `broadcast_recipient_link`, `broadcast_link`: per broadcast email and per
 *   link, what `GET /broadcasts/{id}/recipients` and `/clicked-links` page through.
 *
 * Triggers keep them: a statement trigger on `email` (received) and on `event` (everything else),
 * so a row of them is written by the statement that writes the email or the event, whichever path
 * wrote it (emitEvent, emitEvents, the outbox settle, provider reports, tracking), and commits or
 * rolls back with it. Counter rows carry `slot`, the writing backend's pid: a backend runs one
 * transaction at a time, so two open transactions never wait on one counter row (and never
 * deadlock on them); a reader sums the slots.
 *
 * A retraction (`email.prefetched` repeating an earlier `email.clicked`'s link and timestamp, or an
 * earlier `email.opened`'s timestamp, of the same email) takes the click or open back out of the hour
 * it was counted in. The unique metrics count an email once, in the hour of its first standing open
 * (click); when that one is retracted, the next standing one, if any, counts instead.
 */
export class Migration20261231000000_email_metrics extends Migration {
  override async up(): Promise<void> {
    const counters = [
      'received',
      'sent',
      'delivered',
      'delivery_delayed',
      'failed',
      'bounced_permanent',
      'bounced_transient',
      'bounced_undetermined',
      'complained',
      'opened',
      'unique_opened',
      'clicked',
      'unique_clicked',
      'unsubscribed',
      'suppressed',
    ];
    this.addSql(
      `create table "email_metrics_hourly" ("team_id" uuid not null, "hour" timestamptz not null, "domain" text not null, "broadcast_id" uuid not null, "slot" int not null, ${counters
        .map((c) => `"${c}" bigint not null default 0`)
        .join(
          ', ',
        )}, constraint "email_metrics_hourly_pkey" primary key ("team_id", "hour", "domain", "broadcast_id", "slot"));`,
    );
    this.addSql(
      `create table "email_engagement" ("email_id" uuid not null, "first_open_at" timestamptz null, "first_click_at" timestamptz null, constraint "email_engagement_pkey" primary key ("email_id"));`,
    );
    this.addSql(
      `create table "broadcast_recipient" ("id" uuid not null default gen_random_uuid(), "broadcast_id" uuid not null, "email_id" uuid not null, "team_id" uuid not null, "address" text not null, "sent" boolean not null default false, "delivered" boolean not null default false, "complained" boolean not null default false, "suppressed" boolean not null default false, "bounce_type" text null, "opens" int not null default 0, "clicks" int not null default 0, constraint "broadcast_recipient_pkey" primary key ("broadcast_id", "email_id"));`,
    );
    // One partial index per listing type, so a page of a rare type (bounces, complaints) reads only its rows.
    this.addSql(
      `create index "broadcast_recipient_sent_idx" on "broadcast_recipient" ("broadcast_id", "email_id") where sent;`,
    );
    this.addSql(
      `create index "broadcast_recipient_delivered_idx" on "broadcast_recipient" ("broadcast_id", "email_id") where delivered;`,
    );
    this.addSql(
      `create index "broadcast_recipient_opened_idx" on "broadcast_recipient" ("broadcast_id", "email_id") where opens > 0;`,
    );
    this.addSql(
      `create index "broadcast_recipient_clicked_idx" on "broadcast_recipient" ("broadcast_id", "email_id") where clicks > 0;`,
    );
    this.addSql(
      `create index "broadcast_recipient_bounced_idx" on "broadcast_recipient" ("broadcast_id", "bounce_type", "email_id") where bounce_type is not null;`,
    );
    this.addSql(
      `create index "broadcast_recipient_complained_idx" on "broadcast_recipient" ("broadcast_id", "email_id") where complained;`,
    );
    this.addSql(
      `create index "broadcast_recipient_suppressed_idx" on "broadcast_recipient" ("broadcast_id", "email_id") where suppressed;`,
    );
    this.addSql(
      `create index "broadcast_recipient_address_idx" on "broadcast_recipient" ("broadcast_id", "address", "email_id");`,
    );
    this.addSql(`create index "broadcast_recipient_team_idx" on "broadcast_recipient" ("team_id");`);
    this.addSql(
      `create table "broadcast_recipient_link" ("id" uuid not null default gen_random_uuid(), "broadcast_id" uuid not null, "email_id" uuid not null, "team_id" uuid not null, "url" text not null, "clicks" int not null default 0, constraint "broadcast_recipient_link_pkey" primary key ("broadcast_id", "email_id", "url"));`,
    );
    this.addSql(`create index "broadcast_recipient_link_team_idx" on "broadcast_recipient_link" ("team_id");`);
    this.addSql(
      `create table "broadcast_link" ("id" uuid not null default gen_random_uuid(), "broadcast_id" uuid not null, "team_id" uuid not null, "url" text not null, "slot" int not null, "clicks" bigint not null default 0, "unique_clicks" bigint not null default 0, constraint "broadcast_link_pkey" primary key ("broadcast_id", "url", "slot"));`,
    );
    this.addSql(`create index "broadcast_link_team_idx" on "broadcast_link" ("team_id");`);

    // The sender's host, as the rollup keys it: lower-case, '' when the address has none.
    this.addSql(`create function postlane_sender_domain(sender text) returns text language sql immutable as $$
      select lower(coalesce(substring(sender from '@([^@<>"[:space:]]+)>?[[:space:]]*$'), ''))
    $$;`);
    this.addSql(`create function postlane_no_broadcast() returns uuid language sql immutable as $$
      select '00000000-0000-0000-0000-000000000000'::uuid
    $$;`);

    // Adds `delta` to one counter of the hour `at` falls in.
    this
      .addSql(`create function postlane_metrics_add(team uuid, at timestamptz, dom text, bc uuid, counter text, delta int) returns void language plpgsql as $$
      begin
        execute format(
          'insert into email_metrics_hourly as m (team_id, hour, domain, broadcast_id, slot, %1$I) values ($1, date_trunc(''hour'', $2, ''UTC''), $3, $4, pg_backend_pid(), $5)
             on conflict (team_id, hour, domain, broadcast_id, slot) do update set %1$I = m.%1$I + excluded.%1$I', counter)
          using team, at, dom, bc, delta;
      end $$;`);

    // The first standing open (click) of an email moves: the unique counter moves with it.
    this
      .addSql(`create function postlane_move_first(team uuid, dom text, bc uuid, counter text, old_at timestamptz, new_at timestamptz) returns void language plpgsql as $$
      begin
        if old_at is not distinct from new_at then return; end if;
        if old_at is not null then perform postlane_metrics_add(team, old_at, dom, bc, counter, -1); end if;
        if new_at is not null then perform postlane_metrics_add(team, new_at, dom, bc, counter, 1); end if;
      end $$;`);

    this.addSql(`create function postlane_email_metrics() returns trigger language plpgsql as $$
      begin
        insert into email_metrics_hourly as m (team_id, hour, domain, broadcast_id, slot, received)
        select team_id, date_trunc('hour', created_at, 'UTC'), postlane_sender_domain("from"), coalesce(broadcast_id, postlane_no_broadcast()), pg_backend_pid(), count(*)
          from new_rows group by 1, 2, 3, 4 order by 1, 2, 3, 4
        on conflict (team_id, hour, domain, broadcast_id, slot) do update set received = m.received + excluded.received;
        return null;
      end $$;`);

    const plain: Record<string, string> = {
      sent: `type = 'email.sent'`,
      delivered: `type = 'email.delivered'`,
      delivery_delayed: `type = 'email.delivery_delayed'`,
      failed: `type = 'email.failed'`,
      bounced_permanent: `type in ('email.bounced', 'email.soft_bounced') and payload->'bounce'->>'type' = 'Permanent'`,
      bounced_transient: `type in ('email.bounced', 'email.soft_bounced') and payload->'bounce'->>'type' = 'Transient'`,
      bounced_undetermined: `type in ('email.bounced', 'email.soft_bounced') and coalesce(payload->'bounce'->>'type', '') not in ('Permanent', 'Transient')`,
      complained: `type = 'email.complained'`,
      opened: `type = 'email.opened'`,
      clicked: `type = 'email.clicked'`,
      suppressed: `type = 'email.suppressed'`,
    };
    this.addSql(`create function postlane_event_metrics() returns trigger language plpgsql as $$
      declare
        r record;
        bc uuid;
        dom text;
        eng record;
        standing timestamptz;
      begin
        -- Plain counts, one statement for the whole batch, rows in key order.
        insert into email_metrics_hourly as m (team_id, hour, domain, broadcast_id, slot, ${Object.keys(plain).join(', ')})
        select team_id, date_trunc('hour', created_at, 'UTC'), postlane_sender_domain(payload->>'from'),
               coalesce((payload->>'broadcast_id')::uuid, postlane_no_broadcast()), pg_backend_pid(),
               ${Object.values(plain)
                 .map((f) => `count(*) filter (where ${f})`)
                 .join(', ')}
          from new_rows
         where email_id is not null and type in ('email.sent', 'email.delivered', 'email.delivery_delayed', 'email.failed', 'email.bounced', 'email.soft_bounced', 'email.complained', 'email.opened', 'email.clicked', 'email.suppressed')
         group by 1, 2, 3, 4 order by 1, 2, 3, 4
        on conflict (team_id, hour, domain, broadcast_id, slot) do update set ${Object.keys(plain)
          .map((c) => `${c} = m.${c} + excluded.${c}`)
          .join(', ')};

        -- A broadcast's recipients: what happened to each of its emails.
        insert into broadcast_recipient as b (broadcast_id, email_id, team_id, address, sent, delivered, complained, suppressed, bounce_type, opens, clicks)
        select (payload->>'broadcast_id')::uuid, email_id, min(team_id::text)::uuid, lower(min(payload->'to'->>0)),
               bool_or(type = 'email.sent'), bool_or(type = 'email.delivered'), bool_or(type = 'email.complained'), bool_or(type = 'email.suppressed'),
               max(case when type = 'email.bounced' or type = 'email.soft_bounced' then
                     case payload->'bounce'->>'type' when 'Permanent' then 'permanent' when 'Transient' then 'transient' else 'undetermined' end end),
               count(*) filter (where type = 'email.opened'), count(*) filter (where type = 'email.clicked')
          from new_rows
         where email_id is not null and payload ? 'broadcast_id'
           and type in ('email.sent', 'email.delivered', 'email.complained', 'email.suppressed', 'email.bounced', 'email.soft_bounced', 'email.opened', 'email.clicked')
         group by 1, 2 order by 1, 2
        on conflict (broadcast_id, email_id) do update set
          sent = b.sent or excluded.sent, delivered = b.delivered or excluded.delivered,
          complained = b.complained or excluded.complained, suppressed = b.suppressed or excluded.suppressed,
          -- A hard bounce outranks a soft one; otherwise the latest kind stands.
          bounce_type = case when b.bounce_type = 'permanent' then 'permanent' else coalesce(excluded.bounce_type, b.bounce_type) end,
          opens = b.opens + excluded.opens, clicks = b.clicks + excluded.clicks;

        -- Opens, clicks and their retractions, one by one in time order: uniques and links.
        for r in select * from new_rows
                  where email_id is not null and type in ('email.opened', 'email.clicked', 'email.prefetched')
                  order by created_at, id loop
          bc := (r.payload->>'broadcast_id')::uuid;
          dom := postlane_sender_domain(r.payload->>'from');
          insert into email_engagement (email_id) values (r.email_id) on conflict (email_id) do nothing;
          select * into eng from email_engagement where email_id = r.email_id for update;

          if r.type = 'email.opened' then
            if eng.first_open_at is null or r.created_at < eng.first_open_at then
              perform postlane_move_first(r.team_id, dom, coalesce(bc, postlane_no_broadcast()), 'unique_opened', eng.first_open_at, r.created_at);
              update email_engagement set first_open_at = r.created_at where email_id = r.email_id;
            end if;

          elsif r.type = 'email.clicked' then
            if eng.first_click_at is null or r.created_at < eng.first_click_at then
              perform postlane_move_first(r.team_id, dom, coalesce(bc, postlane_no_broadcast()), 'unique_clicked', eng.first_click_at, r.created_at);
              update email_engagement set first_click_at = r.created_at where email_id = r.email_id;
            end if;
            if bc is not null then
              perform postlane_link_click(bc, r.email_id, r.team_id, r.payload->'click'->>'link', 1);
            end if;

          elsif r.payload->'open' ? 'timestamp' and exists (
              select 1 from event e where e.email_id = r.email_id and e.type = 'email.opened'
                 and e.created_at = (r.payload->'open'->>'timestamp')::timestamptz) then
            -- The open an earlier click brought, retracted with it.
            standing := (r.payload->'open'->>'timestamp')::timestamptz;
            perform postlane_metrics_add(r.team_id, standing, dom, coalesce(bc, postlane_no_broadcast()), 'opened', -1);
            if bc is not null then
              update broadcast_recipient set opens = opens - 1 where broadcast_id = bc and email_id = r.email_id;
            end if;
            if eng.first_open_at = standing then
              perform postlane_move_first(r.team_id, dom, coalesce(bc, postlane_no_broadcast()), 'unique_opened', standing,
                postlane_first_standing(r.email_id, 'email.opened', standing));
              update email_engagement set first_open_at = postlane_first_standing(r.email_id, 'email.opened', standing) where email_id = r.email_id;
            end if;

          elsif r.payload->'click' ? 'timestamp' and exists (
              select 1 from event e where e.email_id = r.email_id and e.type = 'email.clicked'
                 and e.created_at = (r.payload->'click'->>'timestamp')::timestamptz
                 and e.payload->'click'->>'link' = r.payload->'click'->>'link') then
            -- An earlier click, recorded again as a machine's: it no longer counts.
            standing := (r.payload->'click'->>'timestamp')::timestamptz;
            perform postlane_metrics_add(r.team_id, standing, dom, coalesce(bc, postlane_no_broadcast()), 'clicked', -1);
            if bc is not null then
              update broadcast_recipient set clicks = clicks - 1 where broadcast_id = bc and email_id = r.email_id;
              perform postlane_link_click(bc, r.email_id, r.team_id, r.payload->'click'->>'link', -1);
            end if;
            if eng.first_click_at = standing then
              perform postlane_move_first(r.team_id, dom, coalesce(bc, postlane_no_broadcast()), 'unique_clicked', standing,
                postlane_first_standing(r.email_id, 'email.clicked', standing));
              update email_engagement set first_click_at = postlane_first_standing(r.email_id, 'email.clicked', standing) where email_id = r.email_id;
            end if;
          end if;
        end loop;
        return null;
      end $$;`);

    // The earliest open (click) of an email at or after `since` that no retraction took back.
    this
      .addSql(`create function postlane_first_standing(eid uuid, kind text, since timestamptz) returns timestamptz language sql stable as $$
      select min(e.created_at) from event e
       where e.email_id = eid and e.type = kind and e.created_at >= since
         and not exists (
           select 1 from event p where p.email_id = eid and p.type = 'email.prefetched'
              and (p.payload->(case kind when 'email.opened' then 'open' else 'click' end)->>'timestamp')::timestamptz = e.created_at
              and (kind = 'email.opened' or p.payload->'click'->>'link' = e.payload->'click'->>'link'))
    $$;`);

    // One recipient's clicks of one link, and the link's totals (unique: recipients with a standing click).
    this
      .addSql(`create function postlane_link_click(bc uuid, eid uuid, team uuid, link text, delta int) returns void language plpgsql as $$
      declare before int;
      begin
        select clicks into before from broadcast_recipient_link where broadcast_id = bc and email_id = eid and url = link for update;
        insert into broadcast_recipient_link as l (broadcast_id, email_id, team_id, url, clicks) values (bc, eid, team, link, delta)
          on conflict (broadcast_id, email_id, url) do update set clicks = l.clicks + excluded.clicks;
        insert into broadcast_link as k (broadcast_id, team_id, url, slot, clicks, unique_clicks)
          values (bc, team, link, pg_backend_pid(), delta,
                  case when coalesce(before, 0) = 0 and delta > 0 then 1 when before + delta = 0 then -1 else 0 end)
          on conflict (broadcast_id, url, slot) do update set clicks = k.clicks + excluded.clicks, unique_clicks = k.unique_clicks + excluded.unique_clicks;
      end $$;`);

    this.addSql(
      `create trigger "email_metrics_trigger" after insert on "email" referencing new table as new_rows for each statement execute function postlane_email_metrics();`,
    );
    this.addSql(
      `create trigger "event_metrics_trigger" after insert on "event" referencing new table as new_rows for each statement execute function postlane_event_metrics();`,
    );

    // Backfill: what the triggers would have written for the emails and events kept so far, in slot 0.
    this.addSql(`insert into email_metrics_hourly (team_id, hour, domain, broadcast_id, slot, received)
      select team_id, date_trunc('hour', created_at, 'UTC'), postlane_sender_domain("from"), coalesce(broadcast_id, postlane_no_broadcast()), 0, count(*)
        from email group by 1, 2, 3, 4;`);
    // The events are replayed through the trigger function itself (a scratch table with the same
    // trigger), in one statement, so uniques and retractions come out exactly as live writes make them.
    this.addSql(`create temporary table "backfill_event" (like "event");`);
    this.addSql(
      `create trigger "backfill_event_metrics_trigger" after insert on "backfill_event" referencing new table as new_rows for each statement execute function postlane_event_metrics();`,
    );
    this.addSql(`insert into "backfill_event" select * from "event" where email_id is not null;`);
    this.addSql(`drop table "backfill_event";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "event_metrics_trigger" on "event";`);
    this.addSql(`drop trigger if exists "email_metrics_trigger" on "email";`);
    this.addSql(`drop function if exists postlane_event_metrics();`);
    this.addSql(`drop function if exists postlane_email_metrics();`);
    this.addSql(`drop function if exists postlane_link_click(uuid, uuid, uuid, text, int);`);
    this.addSql(`drop function if exists postlane_first_standing(uuid, text, timestamptz);`);
    this.addSql(`drop function if exists postlane_move_first(uuid, text, uuid, text, timestamptz, timestamptz);`);
    this.addSql(`drop function if exists postlane_metrics_add(uuid, timestamptz, text, uuid, text, int);`);
    this.addSql(`drop function if exists postlane_no_broadcast();`);
    this.addSql(`drop function if exists postlane_sender_domain(text);`);
    this.addSql(`drop table if exists "broadcast_link";`);
    this.addSql(`drop table if exists "broadcast_recipient_link";`);
    this.addSql(`drop table if exists "broadcast_recipient";`);
    this.addSql(`drop table if exists "email_engagement";`);
    this.addSql(`drop table if exists "email_metrics_hourly";`);
  }
}
