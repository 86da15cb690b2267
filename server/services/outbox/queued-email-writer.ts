import type { MikroORM } from '@mikro-orm/postgresql';
import { preparedQuery } from '../../db/query.js';
import type { JobQueue } from '../../job-queue.js';

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
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  /** `content` is base64, as it came in: Postgres decodes it. */
  attachments: { filename: string; content_type: string | null; content: string }[];
  region: string;
  message_id: string;
  created_at: string;
  scheduled_at: string | null;
  topic_id: string | null;
  /** Past a daily quota: not sent before this (the next UTC midnight), and counted on that day. */
  park_until: string | null;
  recipients: { kind: 'to' | 'cc' | 'bcc'; address: string }[];
  /** An SMTP submission's message as submitted, base64 (Postgres decodes it): it goes out instead of one composed from the fields. */
  raw_mime?: string;
  /** A broadcast's copy: which broadcast, and the paced time before which it is not sent. */
  broadcast_id?: string;
  not_before?: string;
}

/** Usage counter rows per team and day; statements take them in turn. */
const USAGE_SHARDS = 8;

/**
 * The outbox write for any number of emails as one statement: each email as `queued`, its
 * recipients, and a drain job for its region due no later than it, committed together, unless
 * such a job is already waiting (a running drain is locked, so it does not count: it may be about
 * to finish). Agenda cannot join our transaction (it enqueues on its own pool), so we write its
 * rows ourselves, in the shape of the DDL our migration owns: a committed email always has a
 * drain coming, and the sweeper is the backstop. Idempotent requests' keys are stored in it too;
 * the emails of a request whose key another request holds are not written, and the statement
 * answers those keys.
 */
const INSERT_QUEUED_EMAILS = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset(?::jsonb) AS r(
      id uuid, team_id uuid, "from" text, "to" text[], cc text[], bcc text[], reply_to text[], subject text,
      html text, text text, headers jsonb, tags jsonb, attachments jsonb, region text, message_id text,
      created_at timestamptz, scheduled_at timestamptz, topic_id uuid, park_until timestamptz, recipients jsonb,
      broadcast_id uuid, not_before timestamptz, idempotency_key text, raw_mime text)
  ), keys AS (
    SELECT * FROM jsonb_to_recordset(?::jsonb) AS k(team_id uuid, key text, request_hash text, status_code int, response jsonb)
  ), claimed AS (
    -- A key older than 24 hours counts as absent: the row is taken over. A fresh one (or one another
    -- statement is committing: the insert waits for it) keeps its emails out of this statement.
    INSERT INTO idempotency_key (team_id, key, request_hash, state, status_code, response, created_at)
    -- In one order in every statement, so two statements waiting on each other's keys cannot deadlock.
    SELECT team_id, key, decode(request_hash, 'hex'), 'done', status_code, response, now() FROM keys ORDER BY team_id, key
    ON CONFLICT (team_id, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, state = 'done', status_code = EXCLUDED.status_code, response = EXCLUDED.response, created_at = now()
      WHERE idempotency_key.created_at < now() - interval '24 hours'
    RETURNING team_id, key
  ), admitted AS (
    SELECT * FROM input i WHERE i.idempotency_key IS NULL OR (i.team_id, i.idempotency_key) IN (SELECT team_id, key FROM claimed)
  ), email AS (
    INSERT INTO email (id, created_at, updated_at, team_id, "from", "to", cc, bcc, reply_to, subject, html, text,
                       headers, tags, topic_id, broadcast_id, region, message_id, status, last_event, scheduled_at, send_after, attempts, raw_mime)
    -- Due by the database's clock, which the send job's claim compares against, even if ours runs ahead.
    SELECT id, created_at, created_at, team_id, "from", "to", cc, bcc, reply_to, subject, html, text,
           headers, tags, topic_id, broadcast_id, region, message_id, 'queued', CASE WHEN scheduled_at > now() THEN 'scheduled' ELSE 'queued' END,
           scheduled_at, coalesce(greatest(scheduled_at, park_until, not_before), least(created_at, now())), 0, decode(raw_mime, 'base64') FROM admitted
    RETURNING region, send_after
  ), usage AS (
    INSERT INTO team_daily_usage (team_id, day, shard, accepted, parked)
    SELECT team_id, (coalesce(park_until, created_at) AT TIME ZONE 'UTC')::date, ?, count(*), count(park_until) FROM admitted GROUP BY 1, 2
    ON CONFLICT (team_id, day, shard) DO UPDATE
      SET accepted = team_daily_usage.accepted + excluded.accepted, parked = team_daily_usage.parked + excluded.parked
  ), recipients AS (
    INSERT INTO email_recipient (id, created_at, email_id, kind, address, status)
    SELECT postlane_uuid_v7(), i.created_at, i.id, r.kind, r.address, 'pending'
      FROM admitted i, jsonb_to_recordset(i.recipients) AS r(kind text, address text)
  ), attachments AS (
    INSERT INTO email_attachment (id, created_at, email_id, position, filename, content_type, content, size)
    SELECT postlane_uuid_v7(), i.created_at, i.id, a.position - 1, a.filename, a.content_type, decode(a.content, 'base64'),
           octet_length(decode(a.content, 'base64'))
      FROM admitted i,
           ROWS FROM (jsonb_to_recordset(i.attachments) AS (filename text, content_type text, content text))
             WITH ORDINALITY AS a(filename, content_type, content, position)
  ), jobs AS (
    INSERT INTO agenda_jobs (name, priority, type, next_run_at, data)
    SELECT 'email.drain', 0, 'normal', d.due, jsonb_build_object('region', d.region)
      FROM (SELECT region, min(send_after) AS due FROM email GROUP BY region) d
     WHERE NOT EXISTS (SELECT 1 FROM agenda_jobs j
                        WHERE j.name = 'email.drain' AND j.data->>'region' = d.region AND j.locked_at IS NULL AND j.next_run_at <= d.due)
  )
  -- The keys another request holds: their emails were not written.
  SELECT k.team_id, k.key FROM keys k WHERE (k.team_id, k.key) NOT IN (SELECT team_id, key FROM claimed)`;

/**
 * An Idempotency-Key stored with the emails of the request that sent them, and the answer a repeat
 * of that request gets: committed in the same statement, or neither (reliability-notes §3).
 */
export interface IdempotencyRecord {
  teamId: string;
  key: string;
  requestHash: Buffer;
  statusCode: number;
  response: unknown;
}

/** Another request holds the Idempotency-Key: none of this request's emails were written. */
export class IdempotencyKeyTaken extends Error {
  constructor() {
    super('The Idempotency-Key is stored already');
  }
}

interface Waiting {
  /** The row as JSON, serialised once, on the request's own turn. */
  json: string;
  /** The request's key row as JSON, and the key it names. */
  record?: { json: string; name: string };
  resolve: () => void;
  reject: (err: unknown) => void;
}

const keyJson = (record: IdempotencyRecord) =>
  JSON.stringify({
    team_id: record.teamId,
    key: record.key,
    request_hash: record.requestHash.toString('hex'),
    status_code: record.statusCode,
    response: record.response,
  });

/**
 * Group commit for POST /emails. A write starts at once while fewer than `maxInFlight` are
 * running; requests that arrive meanwhile share the next statement, up to `maxBatchBytes` of
 * rows (a larger row goes alone). Alone, a request waits for nothing; under load, many share one
 * round trip, one plan and one WAL flush. If a shared statement fails, its rows are written one by
 * one, so only a row that fails on its own fails its request. An idempotent request's key row
 * joins the statement too; two requests with one key never share a statement, so the second
 * waits for the first's and finds the key taken.
 */
export class QueuedEmailWriter {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;
  private shard = 0;
  /**
   * The usage shard each open transaction writes: one per transaction, so two transactions that
   * each write many emails (automation step batches) never take two shard rows in opposite orders.
   */
  private readonly transactionShards = new WeakMap<object, number>();

  constructor(
    private readonly orm: MikroORM,
    private readonly jobs: Pick<JobQueue, 'wake'>,
    private readonly maxInFlight = 4,
    private readonly maxBatchBytes = 4 * 1024 * 1024,
  ) {}

  /**
   * Inside a transaction (a send under a quota) the row is written there and then, with a wake-up
   * after it ends; otherwise it joins the next shared statement. Rejects with IdempotencyKeyTaken
   * when `record`'s key is another request's.
   */
  async write(row: QueuedEmailRow, record?: IdempotencyRecord): Promise<void> {
    if (this.orm.em.isInTransaction()) return this.writeTogether([row], record);
    return new Promise((resolve, reject) => {
      const keyed = record ? { ...row, idempotency_key: record.key } : row;
      this.waiting.push({
        json: JSON.stringify(keyed),
        record: record && { json: keyJson(record), name: `${record.teamId} ${record.key}` },
        resolve,
        reject,
      });
      this.drain();
    });
  }

  /**
   * All the rows (and `record`, even with no rows) in one statement of their own: they commit
   * together or not at all (a batch send). Inside a transaction, workers are woken once it has
   * ended (a NOTIFY inside it would take Postgres' global notify lock at every commit; a wake-up
   * after a rollback finds nothing, harmlessly).
   */
  async writeTogether(rows: QueuedEmailRow[], record?: IdempotencyRecord): Promise<void> {
    const keyed = record ? rows.map((row) => ({ ...row, idempotency_key: record.key })) : rows;
    const transaction = this.orm.em.getTransactionContext<{ executionPromise?: Promise<unknown> }>();
    let shard = transaction && this.transactionShards.get(transaction);
    if (transaction && shard === undefined) this.transactionShards.set(transaction, (shard = this.nextShard()));
    const taken = await this.insertRows(JSON.stringify(keyed), record ? `[${keyJson(record)}]` : '[]', shard);
    if (taken.length > 0) throw new IdempotencyKeyTaken();
    if (!transaction?.executionPromise) return this.jobs.wake('email.drain');
    transaction.executionPromise.then(
      () => this.jobs.wake('email.drain'),
      () => {},
    );
  }

  private drain(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.takeBatch();
      this.inFlight += 1;
      this.insert(batch)
        .catch(
          // Only a row's own data can fail it alone (SQLSTATE classes 22 and 23); anything else, such
          // as a lost connection after a commit, must not be retried row by row.
          (err: unknown) =>
            batch.length > 1 && /^2[23]/.test((err as { code?: string }).code ?? '')
              ? this.insertOneByOne(batch)
              : batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.drain();
        });
    }
  }

  /** The keys of `keysJson` that other requests hold. */
  private insertRows(
    rowsJson: string,
    keysJson: string,
    shard = this.nextShard(),
  ): Promise<{ team_id: string; key: string }[]> {
    return preparedQuery(this.orm, 'postlane_insert_queued_emails', INSERT_QUEUED_EMAILS, [rowsJson, keysJson, shard]);
  }

  private nextShard(): number {
    this.shard = (this.shard + 1) % USAGE_SHARDS;
    return this.shard;
  }

  /** The next rows in order, up to the byte budget and short of a key already among them. */
  private takeBatch(): Waiting[] {
    let bytes = this.waiting[0]!.json.length;
    let count = 1;
    const keys = new Set(this.waiting[0]!.record ? [this.waiting[0]!.record.name] : []);
    while (count < this.waiting.length) {
      const next = this.waiting[count]!;
      if (bytes + next.json.length > this.maxBatchBytes || (next.record && keys.has(next.record.name))) break;
      if (next.record) keys.add(next.record.name);
      bytes += next.json.length;
      count += 1;
    }
    return this.waiting.splice(0, count);
  }

  /** Settles every request of the batch: written, or its key taken. */
  private async insert(batch: Waiting[]): Promise<void> {
    const records = batch.flatMap((w) => (w.record ? [w.record.json] : []));
    const taken = new Set(
      (await this.insertRows(`[${batch.map((w) => w.json).join(',')}]`, `[${records.join(',')}]`)).map(
        (k) => `${k.team_id} ${k.key}`,
      ),
    );
    this.jobs.wake('email.drain');
    for (const w of batch) {
      if (w.record && taken.has(w.record.name)) w.reject(new IdempotencyKeyTaken());
      else w.resolve();
    }
  }

  private async insertOneByOne(batch: Waiting[]): Promise<void> {
    for (const waiting of batch) await this.insert([waiting]).catch(waiting.reject);
  }
}
