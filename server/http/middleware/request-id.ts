import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { AppState } from '../context.js';

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** Keeps a caller's (or proxy's) `x-request-id` when it is sane, else makes one; echoed back. */
export function requestId(): Middleware<AppState> {
  return async function requestId(ctx, next) {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('x-request-id', ctx.state.requestId);
    await next();
  };
}
