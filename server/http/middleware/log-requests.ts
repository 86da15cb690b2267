import type { Middleware } from 'koa';
import type { Logger } from '../../logger.js';
import type { AppState } from '../route.js';

/** One line per request, after the error handler has settled the status. Never headers or bodies. */
export function logRequests(logger: Logger): Middleware<AppState> {
  return async function logRequests(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const level = ctx.status >= 500 ? 'error' : 'info';
      logger[level]({
        requestId: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
        keyId: ctx.state.auth?.keyId,
        userAgent: ctx.get('user-agent') || undefined,
      }, 'request');
    }
  };
}
