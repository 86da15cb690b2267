import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';
import { preparedQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { ApiError, concurrentIdempotentRequests, invalidIdempotencyKey, invalidIdempotentRequest } from '../../errors.js';
import type { AppState } from '../route.js';

/** JSON with object keys sorted at every depth, array order kept: whitespace and key order do not matter. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Postgres' lock_not_available: our insert waited on another request's uncommitted key. */
const LOCK_TIMEOUT = '55P03';

/**
 * Idempotency-Key (reliability-notes §3). Runs after validation, so a refused request stores
 * nothing and the key can be reused once the request is fixed. The key row and everything the
 * handler writes commit together; a failure rolls the key back too. Keys live 24 hours.
 */
export function idempotency(deps: Deps, route: string): Middleware<AppState> {
  return async function idempotency(ctx, next) {
    const key = ctx.request.headers['idempotency-key'];
    if (key === undefined) return next();
    if (typeof key !== 'string' || key.length < 1 || key.length > 256) throw invalidIdempotencyKey();
    const teamId = ctx.state.auth!.teamId;
    // The batch validation mode changes the answer, so it is part of the request.
    const mode = ctx.get('x-batch-validation').toLowerCase();
    const hash = createHash('sha256').update(`${route}\n${mode}\n${canonicalJson(ctx.request.body)}`).digest();
    try {
      await deps.orm.em.transactional(async () => {
        // Prepared statements inside the transaction (preparedQuery joins it).
        const run = (name: string, sql: string, params: unknown[]) => preparedQuery<Record<string, unknown>>(deps.orm, `postlane_idempotency_${name}`, sql, params);
        await run('lock_timeout', `SELECT set_config('lock_timeout', '5s', true)`, []);
        // A key older than 24 hours counts as absent: the row is taken over.
        const claimed = await run(
          'claim',
          `INSERT INTO idempotency_key (team_id, key, request_hash, state, created_at) VALUES (?, ?, ?, 'running', now())
           ON CONFLICT (team_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'running', status_code = NULL, response = NULL, created_at = now()
             WHERE idempotency_key.created_at < now() - interval '24 hours'
           RETURNING key`,
          [teamId, key, hash],
        );
        if (claimed.length === 0) {
          const [stored] = (await run(
            'read',
            'SELECT request_hash, state, status_code, response FROM idempotency_key WHERE team_id = ? AND key = ? FOR UPDATE',
            [teamId, key],
          )) as { request_hash: Buffer; state: string; status_code: number; response: unknown }[];
          if (!stored || !Buffer.from(stored.request_hash).equals(hash)) throw invalidIdempotentRequest();
          if (stored.state !== 'done') throw concurrentIdempotentRequests();
          ctx.status = stored.status_code;
          ctx.body = stored.response;
          ctx.set('idempotent-replayed', 'true');
          return;
        }
        await next();
        await run('settle', `UPDATE idempotency_key SET state = 'done', status_code = ?, response = ?::jsonb WHERE team_id = ? AND key = ?`, [
          ctx.status,
          JSON.stringify(ctx.body),
          teamId,
          key,
        ]);
      });
    } catch (err) {
      if (!(err instanceof ApiError) && (err as { code?: string }).code === LOCK_TIMEOUT) throw concurrentIdempotentRequests();
      throw err;
    }
  };
}
