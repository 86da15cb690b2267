import type { MikroORM } from '@mikro-orm/postgresql';
import { pgSafeJson } from '../../db/pg-safe-json.js';
import { sqlQuery } from '../../db/query.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { errorFields, type Logger } from '../../logger.js';
import type { Metrics } from '../../metrics/metrics.js';

export interface ApiLogEntry {
  team_id: string;
  api_key_id: string;
  method: string;
  endpoint: string;
  response_status: number;
  duration_ms: number;
  user_agent: string | null;
  request_body: unknown;
  response_body: unknown;
  created_at: string;
}

/** A row as it waits: its JSON, already safe for PostgreSQL, and the request it records (for log lines only). */
interface PendingRow {
  requestId: string;
  json: string;
}

export interface ApiLogWriterOptions {
  flushMs?: number;
  /** Rows per statement. */
  maxRows?: number;
  /** Held while the database is away; past it, the oldest rows are dropped. */
  maxBufferedBytes?: number;
}

const INSERT_API_LOGS = `
  INSERT INTO api_log (id, created_at, team_id, api_key_id, method, endpoint, response_status, duration_ms, user_agent, request_body, response_body)
  SELECT postlane_uuid_v7(), created_at, team_id, api_key_id, method, endpoint, response_status, duration_ms, user_agent, request_body, response_body
    FROM jsonb_to_recordset(?::jsonb) AS r(created_at timestamptz, team_id uuid, api_key_id uuid, method text, endpoint text,
         response_status smallint, duration_ms int, user_agent text, request_body jsonb, response_body jsonb)`;

/** A driver error's message starts with the SQL and its bound values (request bodies): keep only the reason after them. */
function reasonOf(err: unknown): { name: string; message: string; code?: string } {
  const { name, message, code } = errorFields(err);
  return { name, message: message.split(' - ').at(-1)!, code };
}

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * API log rows are written in the background, many per statement, so logging never adds a round
 * trip to a request. The price, documented: a process that dies loses its last `flushMs` of log
 * rows (never mail). One row never costs another: rows are made safe for PostgreSQL as they are
 * recorded, a refused statement is split until the row PostgreSQL refuses stands alone (and only it
 * is dropped), and while the database is away rows wait, up to `maxBufferedBytes`, oldest dropped first.
 */
export class ApiLogWriter {
  private pending: PendingRow[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** Non-zero while the database is away: the wait before the next try. */
  private backoffMs = 0;
  /** Rows dropped for want of room since the database went away; reported when it returns. */
  private overflowed = 0;
  private readonly flushMs: number;
  private readonly maxRows: number;
  private readonly maxBufferedBytes: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly metrics: Pick<Metrics, 'apiLogRowsDropped'>,
    { flushMs = 250, maxRows = 500, maxBufferedBytes = 32 * 1024 * 1024 }: ApiLogWriterOptions = {},
  ) {
    this.flushMs = flushMs;
    this.maxRows = maxRows;
    this.maxBufferedBytes = maxBufferedBytes;
  }

  record(entry: ApiLogEntry, requestId: string): void {
    const row = { requestId, json: pgSafeJson(JSON.stringify(entry)) };
    this.pending.push(row);
    this.pendingBytes += row.json.length;
    this.dropOverflow();
    if (this.backoffMs === 0 && this.pending.length >= this.maxRows) this.flushInBackground();
    else this.schedule(this.backoffMs || this.flushMs);
  }

  /** `flush` never rejects; the catch is the last guard between a bug in it and a dead process. */
  private flushInBackground(): void {
    this.flush().catch((err: unknown) => this.logger.error({ err: errorFields(err) }, 'API log flush failed'));
  }

  /** Writes whatever is waiting; resolves (never rejects) once every earlier write has finished. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (rows.length > 0) this.flushing = this.flushing.then(() => this.write(rows));
    return this.flushing;
  }

  private schedule(ms: number): void {
    this.timer ??= setTimeout(() => this.flushInBackground(), ms).unref();
  }

  private async write(rows: PendingRow[]): Promise<void> {
    const batches: PendingRow[][] = [];
    for (let i = 0; i < rows.length; i += this.maxRows) batches.push(rows.slice(i, i + this.maxRows));
    while (batches.length > 0) {
      const batch = batches.shift()!;
      try {
        // One bind parameter: Connection.execute would escape the JSON (bodies of 1,000 contacts) into the SQL text in JS.
        await sqlQuery(this.orm.em, INSERT_API_LOGS, [`[${batch.map((row) => row.json).join(',')}]`]);
        this.recovered();
      } catch (err) {
        if (err instanceof Error && isDatabaseUnavailable(err)) {
          const unwritten = [batch, ...batches].flat();
          this.backOff(unwritten.length, err);
          this.pending = [...unwritten, ...this.pending];
          this.pendingBytes = this.pending.reduce((sum, row) => sum + row.json.length, 0);
          this.dropOverflow();
          this.schedule(this.backoffMs);
          return;
        }
        if (batch.length === 1) {
          this.logger.warn(
            { requestId: batch[0]!.requestId, err: reasonOf(err) },
            'API log row refused by the database; dropped',
          );
          this.metrics.apiLogRowsDropped.inc({ reason: 'refused' });
        } else {
          const half = Math.ceil(batch.length / 2);
          batches.unshift(batch.slice(0, half), batch.slice(half));
        }
      }
    }
  }

  private backOff(rows: number, err: unknown): void {
    if (this.backoffMs === 0)
      this.logger.warn(
        { rows, err: reasonOf(err) },
        'cannot write API log rows: database unavailable; keeping them and retrying',
      );
    this.backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(FIRST_BACKOFF_MS, this.backoffMs * 2));
  }

  private recovered(): void {
    if (this.backoffMs === 0 && this.overflowed === 0) return;
    this.logger.info({ dropped: this.overflowed }, 'API log rows are written again');
    this.backoffMs = 0;
    this.overflowed = 0;
  }

  /** Keeps the buffer within its bytes; one line when dropping starts, the count when writes resume. */
  private dropOverflow(): void {
    let dropped = 0;
    let bytes = this.pendingBytes;
    while (bytes > this.maxBufferedBytes && dropped < this.pending.length - 1)
      bytes -= this.pending[dropped++]!.json.length;
    if (dropped === 0) return;
    this.pending.splice(0, dropped);
    this.pendingBytes = bytes;
    if (this.overflowed === 0)
      this.logger.warn({ maxBufferedBytes: this.maxBufferedBytes }, 'API log buffer full; dropping the oldest rows');
    this.overflowed += dropped;
    this.metrics.apiLogRowsDropped.inc({ reason: 'overflow' }, dropped);
  }
}
