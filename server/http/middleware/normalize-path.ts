import type { Middleware } from 'koa';
import type { AppState } from '../context.js';

/** SDKs differ on trailing slashes, and base URLs joined by hand produce `//`: both reach the same route. */
export function normalizePath(): Middleware<AppState> {
  return async function normalizePath(ctx, next) {
    const normalized = ctx.path.replace(/\/{2,}/g, '/').replace(/(.)\/$/, '$1');
    if (normalized !== ctx.path) ctx.path = normalized;
    await next();
  };
}
