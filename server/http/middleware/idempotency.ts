import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Deps } from '../../deps.js';
import { concurrentIdempotentRequests, invalidIdempotencyKey, invalidIdempotentRequest } from '../../errors.js';
import { IdempotencyKeyTaken } from '../../services/emails/queued-email-writer.js';
import type { IdempotentAnswer } from '../../services/emails/send-email.js';
import type { StoredKey } from '../../services/idempotency/stored-key-reader.js';
import type { AppContext, AppState } from '../route.js';

/** JSON with object keys sorted at every depth, array order kept: whitespace and key order do not matter. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Idempotency-Key (reliability-notes §3). Runs after validation, so a refused request stores
 * nothing and the key can be reused once the request is fixed. A stored key is answered from its
 * row; otherwise the route runs with `ctx.state.idempotency` and its send stores the key with its
 * emails and its answer, in the email writer's shared statement: committed together, and a
 * failure stores neither. Two requests racing with one key both run, but only one statement can
 * store the key: the other's emails are not written and it is answered from the stored row (the
 * same answer for the same body, 409 for another). Keys live 24 hours. Stored `running` rows (from
 * before keys were stored with their emails) still answer 409 `concurrent_idempotent_requests`.
 */
export function idempotency(deps: Deps, route: string, statusCode: number): Middleware<AppState> {
  return async function idempotency(ctx, next) {
    const key = ctx.request.headers['idempotency-key'];
    if (key === undefined) return next();
    if (typeof key !== 'string' || key.length < 1 || key.length > 256) throw invalidIdempotencyKey();
    const teamId = ctx.state.auth!.teamId;
    // The batch validation mode changes the answer, so it is part of the request.
    const mode = ctx.get('x-batch-validation').toLowerCase();
    const requestHash = createHash('sha256').update(`${route}\n${mode}\n${canonicalJson(ctx.request.body)}`).digest();
    const answer = (stored: StoredKey | undefined) => {
      if (!stored) throw concurrentIdempotentRequests();
      if (!Buffer.from(stored.request_hash).equals(requestHash)) throw invalidIdempotentRequest();
      if (stored.state !== 'done') throw concurrentIdempotentRequests();
      ctx.status = stored.status_code;
      ctx.body = stored.response;
      ctx.set('idempotent-replayed', 'true');
    };
    const stored = await deps.idempotencyKeys.read(teamId, key);
    if (stored) return answer(stored);
    ctx.state.idempotency = { teamId, key, requestHash, statusCode };
    try {
      await next();
    } catch (err) {
      if (!(err instanceof IdempotencyKeyTaken)) throw err;
      ctx.state.idempotency = undefined;
      answer(await deps.idempotencyKeys.read(teamId, key));
    }
  };
}

/** What a send stores with an idempotent request's key: its answer, made from the send's result. */
export function idempotentAnswer<T>(ctx: AppContext, present: (result: T) => unknown): IdempotentAnswer<T> | undefined {
  return ctx.state.idempotency && { ...ctx.state.idempotency, present };
}
