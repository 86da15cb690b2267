import Router from '@koa/router';
import type { Deps } from '../deps.js';
import type { AppState, Route } from './route.js';
import { apiKeyRoutes } from './routes/api-keys/api-keys.routes.js';
import { emailRoutes } from './routes/emails/emails.routes.js';
import { systemRoutes } from './routes/system/system.routes.js';
import { webhookRoutes } from './routes/webhooks/webhooks.routes.js';

const resourceRoutes: Route[] = [...emailRoutes, ...apiKeyRoutes, ...webhookRoutes];

/** Every route the API serves; the OpenAPI document is built from this same list. */
export const allRoutes: Route[] = [...resourceRoutes, ...systemRoutes(resourceRoutes)];

export function createRouter(deps: Deps) {
  const router = new Router<AppState>();
  for (const route of allRoutes) {
    router.register(route.spec.path, [route.spec.method.toUpperCase()], route.middleware(deps), { name: route.spec.operationId });
  }
  return router;
}
