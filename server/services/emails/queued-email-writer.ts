import type { MikroORM } from '@mikro-orm/postgresql';
import { preparedQuery } from '../../db/prepared.js';
import type { JobQueue } from '../../jobs/job-queue.js';

export interface QueuedEmailRow {
  id: string;
  team_id: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  region: string;
  message_id: string;
  created_at: string;
  recipients: { kind: 'to' | 'cc' | 'bcc'; address: string }[];
}

/**
 * The outbox write for any number of emails as one statement: each email as `queued`, its
 * recipients, and its `email.send` job row, committed together. Agenda cannot join our
 * transaction (it enqueues on its own pool), so we write its rows ourselves, in the shape of the
 * DDL our migration owns: a committed email always has its job, and the sweeper is the backstop.
 */
const INSERT_QUEUED_EMAILS = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset(?::jsonb) AS r(
      id uuid, team_id uuid, "from" text, "to" text[], cc text[], bcc text[], reply_to text[], subject text,
      html text, text text, region text, message_id text, created_at timestamptz, recipients jsonb)
  ), email AS (
    INSERT INTO email (id, created_at, updated_at, team_id, "from", "to", cc, bcc, reply_to, subject, html, text,
                       region, message_id, status, last_event, send_after, attempts)
    SELECT id, created_at, created_at, team_id, "from", "to", cc, bcc, reply_to, subject, html, text,
           region, message_id, 'queued', 'queued', created_at, 0 FROM input
    RETURNING id, send_after
  ), recipients AS (
    INSERT INTO email_recipient (id, created_at, email_id, kind, address, status)
    SELECT gen_random_uuid(), i.created_at, i.id, r.kind, r.address, 'pending'
      FROM input i, jsonb_to_recordset(i.recipients) AS r(kind text, address text)
  )
  INSERT INTO agenda_jobs (name, priority, type, next_run_at, data)
  SELECT 'email.send', 0, 'normal', send_after, jsonb_build_object('emailId', id) FROM email`;

interface Waiting {
  row: QueuedEmailRow;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for POST /emails. A write starts at once while fewer than `maxInFlight` are
 * running; requests that arrive meanwhile share the next statement. Alone, a request waits for
 * nothing; under load, many requests share one round trip, one plan and one WAL flush. A
 * statement that fails fails every request in it, which is why rows arrive fully validated.
 */
export class QueuedEmailWriter {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly orm: MikroORM,
    private readonly jobs: Pick<JobQueue, 'wake'>,
    private readonly maxInFlight = 4,
    private readonly maxBatch = 200,
  ) {}

  write(row: QueuedEmailRow): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight += 1;
      preparedQuery(this.orm, 'postlane_insert_queued_emails', INSERT_QUEUED_EMAILS, [JSON.stringify(batch.map((w) => w.row))])
        .then(
          () => {
            for (const w of batch) w.resolve();
            this.jobs.wake('email.send');
          },
          (err: unknown) => {
            for (const w of batch) w.reject(err);
          },
        )
        .finally(() => {
          this.inFlight -= 1;
          this.drain();
        });
    }
  }
}
