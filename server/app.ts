import Koa from 'koa';
import type { Deps } from './deps.js';
import { routeNotFound } from './errors.js';
import { createDownloadRouter } from './http/public/downloads.routes.js';
import { createIngestRouter } from './http/public/ingest.routes.js';
import { createPreferenceRouter } from './http/public/preferences.routes.js';
import { createSharedEmailRouter } from './http/public/shared-email.routes.js';
import { createTrackingRouter } from './http/public/tracking.routes.js';
import { apiReference } from './http/public/api-reference.js';
import { errorHandler } from './http/middleware/error-handler.js';
import { guidePages } from './http/public/guide-pages.js';
import { logRequests } from './http/middleware/log-requests.js';
import { metricsEndpoint } from './http/public/metrics-endpoint.js';
import { normalizePath } from './http/middleware/normalize-path.js';
import { ormContext } from './http/middleware/orm-context.js';
import { recordApiLog } from './http/middleware/record-api-log.js';
import { requestId } from './http/middleware/request-id.js';
import { trustedProxies } from './http/middleware/trusted-proxies.js';
import type { AppState } from './http/context.js';
import { literalSegments } from './http/middleware/literal-segments.js';
import { allRoutes, createRouter } from './http/router.js';

/** The whole HTTP stack; it never listens, so tests and `postlane serve` mount the same thing. */
export function createApp(deps: Deps): Koa<AppState> {
  // Behind a proxy, the client is the last X-Forwarded-For entry: the one our proxy added, not what the client sent it.
  const app = new Koa<AppState>({ proxy: deps.config.POSTLANE_TRUST_PROXY, maxIpsCount: 1 });
  const router = createRouter(deps);
  // Errors are rendered by errorHandler(); Koa's default handler would log them a second time.
  app.silent = true;
  if (deps.config.POSTLANE_TRUST_PROXY) app.use(trustedProxies(deps.config.POSTLANE_TRUSTED_PROXIES));
  app.use(requestId());
  app.use(logRequests(deps.logger, deps.metrics));
  // Twice: the inner one renders every route's error before the API log records the answer; the
  // outer one stands between everything after request logging and Koa's plain-text 500.
  app.use(errorHandler(deps.logger));
  app.use(recordApiLog(deps.apiLogs, deps.logger));
  app.use(errorHandler(deps.logger));
  app.use(metricsEndpoint(deps.metrics, deps.config));
  app.use(apiReference());
  app.use(guidePages());
  app.use(normalizePath());
  app.use(ormContext(deps.orm));
  app.use(literalSegments(allRoutes.map((route) => route.spec)));
  app.use(router.routes());
  // Provider events (SNS): authenticated by signature, read raw, outside the key-checked router.
  const ingest = createIngestRouter(deps);
  app.use(ingest.routes());
  // The pages behind unsubscribe links: HTML for people, not part of the JSON API or its document.
  const preferencePages = createPreferenceRouter(deps);
  app.use(preferencePages.routes());
  // Open pixels and click redirects, reached through each domain's tracking CNAME.
  const tracking = createTrackingRouter(deps);
  app.use(tracking.routes());
  // The files behind download_url (attachments, raw received messages): the signed token is the key.
  const downloads = createDownloadRouter(deps);
  app.use(downloads.routes());
  // Shared emails' pages (POST /emails/{id}/share): the signed token is the key.
  const sharedEmails = createSharedEmailRouter(deps);
  app.use(sharedEmails.routes());
  app.use(router.allowedMethods({ throw: true }));
  app.use(preferencePages.allowedMethods({ throw: true }));
  app.use(tracking.allowedMethods({ throw: true }));
  app.use(ingest.allowedMethods({ throw: true }));
  app.use(downloads.allowedMethods({ throw: true }));
  app.use(sharedEmails.allowedMethods({ throw: true }));
  return app;
}

/** What a worker-only process serves when POSTLANE_METRICS_PORT is set: its metrics, nothing else. */
export function createMetricsApp(deps: Deps): Koa<AppState> {
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(errorHandler(deps.logger));
  app.use(metricsEndpoint(deps.metrics, deps.config));
  app.use(() => {
    throw routeNotFound();
  });
  return app;
}
