import { NotFoundError, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Middleware } from 'koa';
import { isDatabaseUnavailable, outageReason, throttledErrorLog } from '../../db/unavailable.js';
import { errorFields, type Logger } from '../../logger.js';
import {
  ApiError,
  applicationError,
  conflict,
  methodNotAllowed,
  routeNotFound,
  serviceUnavailable,
  validationError,
} from '../../errors.js';
import type { AppState } from '../context.js';

interface HttpishError extends Error {
  status?: number;
  expose?: boolean;
  code?: string;
  type?: string;
}

/** Every failure leaves as `{statusCode, name, message}` JSON; nothing unexpected is echoed. */
export function toApiError(err: HttpishError): ApiError {
  if (err instanceof ApiError) return err;
  if (err.status === 405 || err.status === 501) return methodNotAllowed();
  if (err.status === 413 || err.type === 'entity.too.large') return validationError('Request body too large', 413);
  if (err instanceof SyntaxError && err.status === 400) return validationError('Invalid JSON body');
  if (err.code?.startsWith('Z_')) return validationError('Invalid compressed body', 400);
  if (err instanceof NotFoundError) return new ApiError(404, 'not_found', 'Resource not found');
  // Raw SQL (bulk contact writes) surfaces the driver's error, not MikroORM's wrapper.
  if (err instanceof UniqueConstraintViolationException || err.code === '23505') return conflict();
  if (isDatabaseUnavailable(err)) return serviceUnavailable();
  if (err.expose && err.status && err.status >= 400 && err.status < 500)
    return validationError(err.message, err.status);
  return applicationError();
}

export function errorHandler(logger: Logger): Middleware<AppState> {
  // Through an outage every request fails alike: one line per 10 s with a count, not a stack each.
  const answeredUnavailable = throttledErrorLog(logger, 'requests answered 503: the database is unavailable');
  return async function errorHandler(ctx, next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw routeNotFound();
    } catch (thrown) {
      const err = thrown instanceof Error ? (thrown as HttpishError) : new Error(String(thrown));
      const apiError = toApiError(err);
      if (isDatabaseUnavailable(err)) {
        answeredUnavailable(new Error(outageReason(err)));
      } else if (apiError.statusCode >= 500) {
        logger.error({ requestId: ctx.state.requestId, err: errorFields(err) }, 'request failed');
      }
      ctx.status = apiError.statusCode;
      ctx.body = apiError.toJSON();
      if (apiError.retryAfterSeconds !== undefined) ctx.set('retry-after', String(apiError.retryAfterSeconds));
    }
  };
}
