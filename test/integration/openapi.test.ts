import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes, createRouter } from '../../server/http/router.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ token } = await app.createTeamWithKey());
});
afterAll(() => app.close());

describe('GET /openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document, version 1.0.0', async () => {
    const res = await app.request('GET', '/openapi.json', { token });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.1\./);
    expect(res.body.info.version).toBe('1.0.0');
    const validated = (await SwaggerParser.validate(structuredClone(res.body))) as OpenAPIV3_1.Document;
    expect(validated.paths?.['/emails']?.post?.operationId).toBe('sendEmail');
    expect(validated.paths?.['/emails/{id}']?.get?.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
  });

  it('documents every mounted route, from the same specs the router uses', async () => {
    const res = await app.request('GET', '/openapi.json', { token });
    const documented = Object.entries(res.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    const mounted = allRoutes.map((r) => `${r.spec.method} ${r.spec.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(documented.sort()).toEqual(mounted.sort());
    // Every layer the router actually serves comes from a route spec: nothing is mounted undocumented.
    const layers = createRouter(app.deps).stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m.toLowerCase()} ${layer.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    expect(layers.sort()).toEqual(mounted.sort());
    expect(new Set(allRoutes.map((r) => r.spec.operationId)).size).toBe(allRoutes.length);
  });
});
