import type { Middleware } from 'koa';
import { restrictedApiKey } from '../../errors.js';
import type { AppState, Permission } from '../context.js';

/** A sending-only key passes only routes that declare `sending_access`. */
export function requirePermission(permission: Exclude<Permission, 'public'>): Middleware<AppState> {
  return async function requirePermission(ctx, next) {
    if (permission === 'full_access' && ctx.state.auth?.permission !== 'full_access') throw restrictedApiKey();
    await next();
  };
}
