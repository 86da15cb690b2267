import { preparedQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
  exceeded: boolean;
}

// Fixed windows on the database's clock, one row per team: every API process counts in the same place.
const COUNT_REQUEST = `
  INSERT INTO rate_limit_window (team_id, window_start, requests)
  VALUES (?, to_timestamp(floor(extract(epoch FROM now()) / ?) * ?), 1)
  ON CONFLICT (team_id) DO UPDATE SET
    requests = CASE WHEN rate_limit_window.window_start = excluded.window_start THEN rate_limit_window.requests + 1 ELSE 1 END,
    window_start = excluded.window_start
  RETURNING requests, extract(epoch FROM window_start + make_interval(secs => ?) - now())::float8 AS reset_seconds`;

/** Counts one request against the team's window; a bulk call is one request like any other. */
export async function countRequest(deps: Pick<Deps, 'orm' | 'config'>, teamId: string): Promise<RateLimitState> {
  const limit = deps.config.POSTLANE_RATE_LIMIT;
  const window = deps.config.POSTLANE_RATE_LIMIT_WINDOW_SECONDS;
  const [row] = await preparedQuery<{ requests: number; reset_seconds: number }>(
    deps.orm,
    'postlane_count_request',
    COUNT_REQUEST,
    [teamId, window, window, window],
  );
  return {
    limit,
    remaining: Math.max(0, limit - row!.requests),
    resetSeconds: Math.max(1, Math.ceil(row!.reset_seconds)),
    exceeded: row!.requests > limit,
  };
}
