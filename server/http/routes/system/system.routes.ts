import * as v from 'valibot';
import { checkHealth } from '../../../services/health/check-health.js';
import { buildOpenApi } from '../../openapi.js';
import { defineRoute, type Route } from '../../route.js';

const HealthSchema = v.pipe(
  v.object({
    ok: v.boolean(),
    database: v.object({ ok: v.boolean(), error: v.optional(v.string()) }),
    jobs: v.object({
      ok: v.boolean(),
      backlog: v.array(v.object({ name: v.string(), due: v.number(), oldest_due_seconds: v.number() })),
      last_sweep_at: v.nullable(v.string()),
    }),
  }),
  v.metadata({ title: 'Health' }),
);

const OpenApiDocumentSchema = v.looseObject({ openapi: v.string(), info: v.looseObject({ version: v.string() }) });

/** Health first (no key: load balancers probe it), then the document describing every route, itself included. */
export function systemRoutes(documented: Route[]): Route[] {
  const routes: Route[] = [
    defineRoute(
      {
        method: 'get',
        path: '/health',
        operationId: 'getHealth',
        summary: 'Database and job runner status (no API key)',
        tags: ['System'],
        permission: 'public',
        responses: { 200: HealthSchema },
        examples: {
          response: {
            ok: true,
            database: { ok: true },
            jobs: { ok: true, backlog: [], last_sweep_at: '2026-11-02T14:03:00.000Z' },
          },
        },
      },
      async ({ deps, ctx }) => {
        const health = await checkHealth(deps);
        // A missing worker degrades the appliance but the API still accepts mail; only a dead database fails the probe.
        if (!health.database.ok) ctx.status = 503;
        return health;
      },
    ),
  ];
  let document: ReturnType<typeof buildOpenApi> | undefined;
  routes.push(
    defineRoute(
      {
        method: 'get',
        path: '/openapi.json',
        operationId: 'getOpenApi',
        summary: 'This OpenAPI 3.1 document (no API key; it describes routes, never data)',
        tags: ['System'],
        permission: 'public',
        responses: { 200: OpenApiDocumentSchema },
        examples: {
          response: {
            openapi: '3.1.0',
            info: { title: 'Postlane API', version: '1.0.0' },
            paths: { '/emails': { post: { operationId: 'sendEmail', summary: 'Send an email' } } },
          },
        },
      },
      ({ deps }) => (document ??= buildOpenApi([...documented, ...routes], deps.config.POSTLANE_PUBLIC_URL)),
    ),
  );
  return routes;
}
