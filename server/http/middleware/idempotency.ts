import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Deps } from '../../deps.js';
import { invalidIdempotencyKey } from '../../errors.js';
import { storedAnswer } from '../../services/idempotency/stored-answer.js';
import type { IdempotentAnswer } from '../../services/emails/send-input.js';
import type { AppContext, AppState } from '../context.js';

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
 * nothing and the key can be reused once the request is fixed. The route runs at once with
 * `ctx.state.idempotency`, and its send stores the key with its emails and its answer, in the
 * email writer's shared statement: committed together, and a failure stores neither. That
 * statement stores a key only if no live row holds it (it waits for one being committed), so a
 * fresh key costs no round trip of its own. Only when the key is taken, or the send is refused
 * (a replay must not be refused because the suppression list or quota changed since), is the
 * stored row read: the same body gets the stored answer, another body 409. Keys live 24 hours.
 * Stored `running` rows (from before keys were stored with their emails) answer 409
 * `concurrent_idempotent_requests`.
 */
export function idempotency(deps: Deps, route: string, statusCode: number): Middleware<AppState> {
  return async function idempotency(ctx, next) {
    const key = ctx.request.headers['idempotency-key'];
    if (key === undefined) {
      await next();
      return;
    }
    if (typeof key !== 'string' || key.length < 1 || key.length > 256) throw invalidIdempotencyKey();
    const teamId = ctx.state.auth!.teamId;
    // The batch validation mode changes the answer, so it is part of the request.
    const mode = ctx.get('x-batch-validation').toLowerCase();
    const requestHash = createHash('sha256')
      .update(`${route}\n${mode}\n${canonicalJson(ctx.request.body)}`)
      .digest();
    const claim = { teamId, key, requestHash, statusCode };
    ctx.state.idempotency = claim;
    try {
      await next();
    } catch (err) {
      ctx.state.idempotency = undefined;
      const stored = await storedAnswer(deps, claim, err);
      ctx.status = stored.statusCode;
      ctx.body = stored.response;
      ctx.set('idempotent-replayed', 'true');
    }
  };
}

/** What a send stores with an idempotent request's key: its answer, made from the send's result. */
export function idempotentAnswer<T>(ctx: AppContext, present: (result: T) => unknown): IdempotentAnswer<T> | undefined {
  return ctx.state.idempotency && { ...ctx.state.idempotency, present };
}
