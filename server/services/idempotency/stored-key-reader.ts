import type { MikroORM } from '@mikro-orm/postgresql';
import { preparedQuery } from '../../db/query.js';
import { SharedQuery } from '../../db/shared-query.js';

export interface StoredKey {
  request_hash: Buffer;
  state: string;
  status_code: number;
  response: unknown;
}

interface KeyRequest {
  teamId: string;
  key: string;
}

// Any number of keys in one round trip; a key older than 24 hours counts as absent.
const STORED_KEYS = `
  SELECT r.req, k.request_hash, k.state, k.status_code, k.response
    FROM jsonb_to_recordset(?::jsonb) AS r(req int, team_id uuid, key text)
    JOIN idempotency_key k ON k.team_id = r.team_id AND k.key = r.key AND k.created_at >= now() - interval '24 hours'`;

/** Idempotency-Key rows, read for many concurrent requests at once (a burst of retries whose keys are stored). */
export class StoredKeyReader {
  private readonly shared: SharedQuery<KeyRequest, StoredKey | undefined>;

  constructor(private readonly orm: MikroORM) {
    this.shared = new SharedQuery(orm, (requests) => this.query(requests));
  }

  read(teamId: string, key: string): Promise<StoredKey | undefined> {
    return this.shared.load({ teamId, key });
  }

  private async query(requests: KeyRequest[]): Promise<(StoredKey | undefined)[]> {
    const rows = await preparedQuery<StoredKey & { req: number }>(this.orm, 'postlane_idempotency_keys', STORED_KEYS, [
      JSON.stringify(requests.map((r, req) => ({ req, team_id: r.teamId, key: r.key }))),
    ]);
    const byRequest = new Map(rows.map((row) => [row.req, row]));
    return requests.map((_, req) => byRequest.get(req));
  }
}
