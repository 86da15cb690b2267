import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { RESEND_LITERALS } from '../../../server/http/middleware/literal-segments.js';
import { allRoutes } from '../../../server/http/router.js';
import { type SdkRoute, sdkRoutes, servingTemplate, unservedReason } from '../../support/sdk-routes.js';
import { useTestApp } from '../../support/test-app.js';

const ROUTE_NOT_FOUND = 'The requested endpoint does not exist.';

describe('every route of the resend SDK', () => {
  const app = useTestApp();
  let routes: SdkRoute[];
  beforeAll(async () => {
    routes = await sdkRoutes();
  });

  const call = (route: SdkRoute) =>
    app.request(route.method, route.template.replaceAll('{id}', randomUUID()), {
      token: app.token,
      ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
    });
  const unrouted = (answer: { status: number; body?: { message?: string } }) =>
    answer.status === 405 || (answer.status === 404 && answer.body?.message === ROUTE_NOT_FOUND);

  it('finds the SDK routes from its package', () => {
    expect(routes.length).toBeGreaterThan(130);
    expect(routes.map((r) => `${r.method} ${r.template}`)).toEqual(
      expect.arrayContaining([
        'GET /emails/metrics',
        'GET /broadcasts/{id}/recipients',
        'GET /broadcasts/{id}/clicked-links',
      ]),
    );
  });

  it('serves each one, but for the documented exceptions, which answer 404 or 405 and nothing else', async () => {
    const wrong: string[] = [];
    for (const route of routes) {
      const answer = await call(route);
      const reason = unservedReason(route);
      const served = servingTemplate(route, allRoutes);
      const line = `${route.method} ${route.template} (${route.call}): ${answer.status} ${answer.body?.message ?? ''}`;
      if (reason === undefined && (unrouted(answer) || !served)) wrong.push(`not served: ${line}`);
      if (reason !== undefined && (!unrouted(answer) || served))
        wrong.push(`served now, so remove it from UNSERVED in test/support/sdk-routes.ts: ${line}`);
    }
    expect(wrong).toEqual([]);
  });

  it('knows every fixed segment of the SDK, so none falls into an id route', () => {
    const ours = allRoutes.flatMap((r) => r.spec.path.split('/').slice(2));
    const known = new Set([...RESEND_LITERALS, ...ours]);
    const words = routes.flatMap((r) => r.template.split('/').slice(2)).filter((s) => s !== '{id}' && s !== '');
    expect([...new Set(words.filter((w) => !known.has(w)))]).toEqual([]);
  });

  it('answers a fixed word where a route takes an id with 404 not_found, not 422 or 405', async () => {
    for (const [method, path] of [
      ['GET', '/emails/imports'],
      ['POST', '/webhooks/imports'],
      ['GET', '/segments/automations'],
      ['GET', '/broadcasts/metrics'],
    ] as const) {
      const answer = await app.request(method, path, { token: app.token, ...(method === 'POST' ? { body: {} } : {}) });
      expect([path, answer.status, answer.body.name]).toEqual([path, 404, 'not_found']);
    }
    // A served fixed path asked with a method only the id route has: the path is known, the method is not.
    expect((await app.request('GET', '/domains/claim', { token: app.token })).body).toMatchObject({
      statusCode: 405,
      name: 'method_not_allowed',
    });
    // An id that is no word stays a malformed id.
    expect((await app.request('GET', '/emails/nope', { token: app.token })).status).toBe(422);
    expect((await app.request('GET', '/emails/metrics', { token: app.token })).status).toBe(200);
  });
});
