import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Logger } from '../../logger.js';

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

const INSERT_API_LOGS = `
  INSERT INTO api_log (id, created_at, team_id, api_key_id, method, endpoint, response_status, duration_ms, user_agent, request_body, response_body)
  SELECT postlane_uuid_v7(), created_at, team_id, api_key_id, method, endpoint, response_status, duration_ms, user_agent, request_body, response_body
    FROM jsonb_to_recordset(?::jsonb) AS r(created_at timestamptz, team_id uuid, api_key_id uuid, method text, endpoint text,
         response_status smallint, duration_ms int, user_agent text, request_body jsonb, response_body jsonb)`;

/**
 * API log rows are written in the background, many per statement, so logging never adds a round
 * trip to a request. The price, documented: a process that dies loses its last `flushMs` of log
 * rows (never mail). A failed write is logged and dropped rather than retried forever.
 */
export class ApiLogWriter {
  private pending: ApiLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly flushMs = 250,
    private readonly maxRows = 500,
  ) {}

  record(entry: ApiLogEntry): void {
    this.pending.push(entry);
    if (this.pending.length >= this.maxRows) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes whatever is waiting; resolves once every earlier write has finished. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.pending;
    this.pending = [];
    if (rows.length > 0) {
      this.flushing = this.flushing.then(() =>
        // A bind parameter: Connection.execute would escape the JSON (bodies of 1,000 contacts) into the SQL text in JS.
        sqlQuery(this.orm.em, INSERT_API_LOGS, [JSON.stringify(rows)])
          .then(
            () => undefined,
            (err: Error) => this.logger.warn({ err: err.message, rows: rows.length }, 'could not write API log rows; dropped'),
          ),
      );
    }
    return this.flushing;
  }
}
