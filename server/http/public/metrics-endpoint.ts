import type { Middleware } from 'koa';
import type { Config } from '../../../config/index.js';
import { methodNotAllowed, metricsRestricted } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * `GET /metrics` for Prometheus. With POSTLANE_METRICS_TOKEN set it takes that bearer token from
 * anywhere; without it, only a direct connection from this machine (a forwarded request, even
 * from a local proxy, is someone else's) may read it.
 */
export function metricsEndpoint(metrics: Metrics, config: Pick<Config, 'POSTLANE_METRICS_TOKEN'>): Middleware {
  return async function metricsEndpoint(ctx, next) {
    if (ctx.path !== '/metrics') {
      await next();
      return;
    }
    const allowed = config.POSTLANE_METRICS_TOKEN
      ? ctx.get('authorization') === `Bearer ${config.POSTLANE_METRICS_TOKEN}`
      : LOOPBACK.has(ctx.req.socket.remoteAddress ?? '') && !ctx.get('x-forwarded-for');
    if (!allowed) throw metricsRestricted();
    if (ctx.method !== 'GET') throw methodNotAllowed();
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
