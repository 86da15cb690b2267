import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Middleware } from 'koa';
import type { AppState } from '../context.js';

/** A fresh EntityManager per request; the global one is never used (allowGlobalContext is off). */
export function ormContext(orm: MikroORM): Middleware<AppState> {
  return function ormContext(_ctx, next) {
    return RequestContext.create(orm.em, next);
  };
}
