import type { Middleware } from 'koa';
import { type Logger, MASKED_ADDRESS } from '../../logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { DOWNLOAD_PATH } from '../../services/downloads/download-token.js';
import { SHARED_EMAIL_PATH } from '../../services/emails/share-email.js';
import type { AppState } from '../context.js';

/** Paths whose last segment is a signed token, a credential while it lasts: download URLs and shared emails' pages. */
const TOKEN_PATHS = [DOWNLOAD_PATH, SHARED_EMAIL_PATH];

/** The path with every segment that is an address, in whatever encoding, masked, and a signed URL's token. */
export function maskPath(path: string): string {
  const signed = TOKEN_PATHS.find((prefix) => path.startsWith(prefix));
  if (signed) return `${signed}[token]`;
  return path
    .split('/')
    .map((segment) => {
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // Not valid percent-encoding: judged as it is.
      }
      return decoded.includes('@') ? MASKED_ADDRESS : segment;
    })
    .join('/');
}

/**
 * One log line and the HTTP metrics per request, after the error handler has settled the status.
 * Never headers or bodies, and never an address: `GET /contacts/ann%40example.com` is logged as
 * `/contacts/[address]`. Metrics are labelled with the route pattern, never the raw path.
 */
export function logRequests(logger: Logger, metrics: Metrics): Middleware<AppState> {
  return async function logRequests(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route =
        typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : ctx.path === '/metrics' ? '/metrics' : 'unmatched';
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, ms / 1000);
      const level = ctx.status >= 500 ? 'error' : 'info';
      logger[level](
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: maskPath(ctx.path),
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
          ip: ctx.ip,
          keyId: ctx.state.auth?.keyId,
          userAgent: ctx.get('user-agent') || undefined,
        },
        'request',
      );
    }
  };
}
