import type { Middleware } from 'koa';
import type { Deps } from '../../deps.js';
import { rateLimitExceeded } from '../../errors.js';
import { countRequest } from '../../services/rate-limit/count-request.js';
import type { AppState } from '../context.js';

/** Per team, after authentication; the headers go on every response, refusals included. */
export function rateLimit(deps: Deps): Middleware<AppState> {
  return async function rateLimit(ctx, next) {
    const state = await countRequest(deps, ctx.state.auth!.teamId);
    ctx.set('ratelimit-limit', String(state.limit));
    ctx.set('ratelimit-remaining', String(state.remaining));
    ctx.set('ratelimit-reset', String(state.resetSeconds));
    ctx.set('ratelimit-policy', `${state.limit};w=${deps.config.POSTLANE_RATE_LIMIT_WINDOW_SECONDS}`);
    if (state.exceeded) throw rateLimitExceeded(state.resetSeconds);
    await next();
  };
}
