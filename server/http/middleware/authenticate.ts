import type { Middleware } from 'koa';
import type { Deps } from '../../deps.js';
import { missingApiKey } from '../../errors.js';
import { authenticateApiKey } from '../../services/api-keys/authenticate-api-key.js';
import type { AppState } from '../context.js';

export function authenticate(deps: Deps): Middleware<AppState> {
  return async function authenticate(ctx, next) {
    const header = ctx.get('authorization');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!header || !match) throw missingApiKey();
    ctx.state.auth = await authenticateApiKey(deps, match[1]!);
    await next();
  };
}
