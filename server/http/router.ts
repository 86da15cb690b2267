import Router from '@koa/router';
import type { Deps } from '../deps.js';
import type { AppState } from './context.js';
import type { Route } from './route.js';
import { broadcastRoutes } from './routes/broadcasts/broadcasts.routes.js';
import { apiKeyRoutes } from './routes/api-keys/api-keys.routes.js';
import { contactPropertyRoutes } from './routes/contact-properties/contact-properties.routes.js';
import { audienceContactRoutes, contactRoutes } from './routes/contacts/contacts.routes.js';
import { domainRoutes } from './routes/domains/domains.routes.js';
import { emailRoutes } from './routes/emails/emails.routes.js';
import { logRoutes } from './routes/logs/logs.routes.js';
import { receivingRoutes } from './routes/receiving/receiving.routes.js';
import { suppressionRoutes } from './routes/suppressions/suppressions.routes.js';
import { templateRoutes } from './routes/templates/templates.routes.js';
import { usageRoutes } from './routes/usage/usage.routes.js';
import { audienceRoutes, segmentRoutes } from './routes/segments/segments.routes.js';
import { systemRoutes } from './routes/system/system.routes.js';
import { topicRoutes } from './routes/topics/topics.routes.js';
import { webhookRoutes } from './routes/webhooks/webhooks.routes.js';

const resourceRoutes: Route[] = [
  // First: `/emails/receiving…` would otherwise match `/emails/:id…` and answer 422 for the id.
  ...receivingRoutes,
  ...emailRoutes,
  ...domainRoutes,
  ...apiKeyRoutes,
  ...contactRoutes,
  ...segmentRoutes,
  ...audienceRoutes,
  ...audienceContactRoutes,
  ...topicRoutes,
  ...contactPropertyRoutes,
  ...suppressionRoutes,
  ...templateRoutes,
  ...webhookRoutes,
  ...broadcastRoutes,
  ...logRoutes,
  ...usageRoutes,
];

/** Every route the API serves; the OpenAPI document is built from this same list. */
export const allRoutes: Route[] = [...resourceRoutes, ...systemRoutes(resourceRoutes)];

export function createRouter(deps: Deps) {
  const router = new Router<AppState>();
  for (const route of allRoutes) {
    router.register(route.spec.path, [route.spec.method.toUpperCase()], route.middleware(deps), {
      name: route.spec.operationId,
    });
  }
  return router;
}
