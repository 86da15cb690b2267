import Router from '@koa/router';
import type { Deps } from '../deps.js';
import type { AppState } from './context.js';
import { rankLiteralsFirst } from './middleware/literal-segments.js';
import type { Route } from './route.js';
import { automationRoutes } from './routes/automations/automations.routes.js';
import { eventRoutes } from './routes/events/events.routes.js';
import { metricsRoutes } from './routes/metrics/metrics.routes.js';
import { broadcastRoutes } from './routes/broadcasts/broadcasts.routes.js';
import { apiKeyRoutes } from './routes/api-keys/api-keys.routes.js';
import { contactImportRoutes } from './routes/contact-imports/contact-imports.routes.js';
import { contactPropertyRoutes } from './routes/contact-properties/contact-properties.routes.js';
import { audienceContactRoutes, contactRoutes } from './routes/contacts/contacts.routes.js';
import { domainRoutes } from './routes/domains/domains.routes.js';
import { emailRoutes } from './routes/emails/emails.routes.js';
import { logRoutes } from './routes/logs/logs.routes.js';
import { oauthGrantRoutes } from './routes/oauth-grants/oauth-grants.routes.js';
import { receivingRoutes } from './routes/receiving/receiving.routes.js';
import { suppressionRoutes } from './routes/suppressions/suppressions.routes.js';
import { templateRoutes } from './routes/templates/templates.routes.js';
import { usageRoutes } from './routes/usage/usage.routes.js';
import { audienceRoutes, segmentRoutes } from './routes/segments/segments.routes.js';
import { systemRoutes } from './routes/system/system.routes.js';
import { topicRoutes } from './routes/topics/topics.routes.js';
import { webhookRoutes } from './routes/webhooks/webhooks.routes.js';

const resourceRoutes: Route[] = [
  ...receivingRoutes,
  ...metricsRoutes,
  ...emailRoutes,
  ...domainRoutes,
  ...apiKeyRoutes,
  // Before contactRoutes: `/contacts/imports` is not a contact called "imports".
  ...contactImportRoutes,
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
  ...oauthGrantRoutes,
  ...automationRoutes,
  ...eventRoutes,
];

/** Every route the API serves; the OpenAPI document is built from this same list. */
export const allRoutes: Route[] = [...resourceRoutes, ...systemRoutes(resourceRoutes)];

export function createRouter(deps: Deps) {
  const router = new Router<AppState>();
  // Fixed segments first: `/emails/metrics` and `/emails/receiving…` before `/emails/:id…`.
  for (const route of rankLiteralsFirst(allRoutes)) {
    router.register(route.spec.path, [route.spec.method.toUpperCase()], route.middleware(deps), {
      name: route.spec.operationId,
    });
  }
  return router;
}
