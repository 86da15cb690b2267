import type { Middleware } from 'koa';
import { errorFields, type Logger } from '../../logger.js';
import type { ApiLogWriter } from '../../services/api-logs/api-log-writer.js';
import { redactBody } from '../../services/api-logs/redact.js';
import type { AppState } from '../context.js';

/** Reading the logs is not itself logged: each read would add rows to what it reads. */
const NOT_LOGGED = /^\/logs(\/|$)/;

function jsonBody(body: unknown): unknown {
  if (body === undefined || body === null || Buffer.isBuffer(body)) return null;
  if (typeof body !== 'string') return redactBody(body);
  try {
    return redactBody(JSON.parse(body));
  } catch {
    return null;
  }
}

/**
 * Every authenticated request, once the error handler inside it has settled its status and body, for
 * GET /logs. A row that cannot be built is logged and skipped: the answer is already decided, and a
 * client told 500 about a request that succeeded would retry it.
 */
export function recordApiLog(writer: ApiLogWriter, logger: Logger): Middleware<AppState> {
  return async function recordApiLog(ctx, next) {
    const started = Date.now();
    try {
      await next();
    } finally {
      const auth = ctx.state.auth;
      if (auth && !NOT_LOGGED.test(ctx.path)) {
        try {
          writer.record(
            {
              team_id: auth.teamId,
              api_key_id: auth.keyId,
              method: ctx.method,
              endpoint: ctx.path,
              response_status: ctx.status,
              duration_ms: Date.now() - started,
              user_agent: ctx.get('user-agent') || null,
              request_body: jsonBody((ctx.request as { body?: unknown }).body),
              response_body: jsonBody(ctx.body),
              created_at: new Date(started).toISOString(),
            },
            ctx.state.requestId,
          );
        } catch (err) {
          logger.error(
            { requestId: ctx.state.requestId, err: errorFields(err) },
            'could not record the API log row; skipped',
          );
        }
      }
    }
  };
}
