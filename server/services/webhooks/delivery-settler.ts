import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebhookDeliveryStatus } from '../../entities/index.js';

/** The outcome of one claimed delivery, and the attempt to record with it (`attempt` null: dropped without a request). */
export interface SettleRecord {
  id: string;
  /** The lease this run claimed with: the write applies only while it still holds it. */
  lease: string;
  status: Exclude<WebhookDeliveryStatus, 'pending' | 'sending'>;
  counted: boolean;
  dueAt: string | null;
  settledAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  attempt: {
    sentAt: string;
    statusCode: number | null;
    latencyMs: number;
    errorClass: string | null;
    response: string;
  } | null;
}

/**
 * Settles many deliveries, even of different endpoints, in one statement: a commit per delivery
 * would make the database's commit rate the ceiling of the whole engine. Each write is guarded by
 * the delivery's lease, so a run that outlived its lease does not undo its successor's work.
 */
const SETTLE_MANY = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset(?::jsonb) AS r(
      id uuid, lease timestamptz, status text, counted boolean, "dueAt" timestamptz, "settledAt" timestamptz,
      "lastStatusCode" int, "lastError" text, attempt jsonb)
  ), settled AS (
    UPDATE webhook_delivery d
       SET status = i.status, attempts = d.attempts + CASE WHEN i.counted AND i.attempt IS NOT NULL THEN 1 ELSE 0 END,
           due_at = coalesce(i."dueAt", d.due_at), lease_expires_at = NULL, settled_at = i."settledAt",
           last_status_code = i."lastStatusCode", last_error = i."lastError", updated_at = now()
      FROM input i
     WHERE d.id = i.id AND d.status = 'sending' AND d.lease_expires_at = i.lease
    RETURNING d.id
  ), attempts AS (
    INSERT INTO webhook_attempt (id, created_at, delivery_id, status_code, latency_ms, error_class, response, counted)
    SELECT postlane_uuid_v7(), (i.attempt->>'sentAt')::timestamptz, i.id, (i.attempt->>'statusCode')::int, (i.attempt->>'latencyMs')::int,
           i.attempt->>'errorClass', i.attempt->>'response', i.counted
      FROM input i JOIN settled s ON s.id = i.id
     WHERE i.attempt IS NOT NULL
  )
  SELECT id FROM settled`;

const MAX_BATCH = 1000;
const SETTLE_COALESCE_MS = 5;

/** Group commit for delivery outcomes: writes queued while one statement runs go together in the next. */
export class DeliverySettler {
  private queue: { record: SettleRecord; resolve: (settled: boolean) => void; reject: (err: Error) => void }[] = [];
  private flushing = false;

  constructor(private readonly orm: MikroORM) {}

  /** True when the outcome was written; false when the lease had passed to another run. */
  settle(record: SettleRecord): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      if (!this.flushing) this.flush().catch((err: Error) => this.failAll(err));
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    // Outcomes of the next few milliseconds share the first statement too: the lanes do not wait
    // for it, and each statement is a commit of its own.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_COALESCE_MS));
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        const rows = await this.orm.em
          .getConnection()
          .execute<{ id: string }[]>(SETTLE_MANY, [JSON.stringify(batch.map((b) => b.record))]);
        const settled = new Set(rows.map((row) => row.id));
        for (const b of batch) b.resolve(settled.has(b.record.id));
      } catch (err) {
        for (const b of batch) b.reject(err as Error);
      }
    }
    this.flushing = false;
  }

  /** flush() hands each statement's error to its batch; anything else reaching here fails every waiter. */
  private failAll(err: Error): void {
    this.flushing = false;
    for (const b of this.queue.splice(0)) b.reject(err);
  }
}
