import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3_1 } from 'openapi-types';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { allRoutes, createRouter } from '../../server/http/router.js';
import { CreateContactBodySchema } from '../../server/http/routes/contacts/contacts.schemas.js';
import { BatchEmailSchema } from '../../server/http/routes/emails/emails.schemas.js';
import { useTestApp } from '../support/test-app.js';

const app = useTestApp();

describe('GET /openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document, version 1.0.0', async () => {
    const res = await app.request('GET', '/openapi.json', { token: app.token });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.1\./);
    expect(res.body.info.version).toBe('1.0.0');
    const validated = (await SwaggerParser.validate(structuredClone(res.body))) as OpenAPIV3_1.Document;
    expect(validated.paths?.['/emails']?.post?.operationId).toBe('sendEmail');
    expect(validated.paths?.['/emails/{id}']?.get?.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
  });

  it('documents every mounted route, from the same specs the router uses', async () => {
    const res = await app.request('GET', '/openapi.json', { token: app.token });
    const documented = Object.entries(res.body.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`),
    );
    const mounted = allRoutes.map((r) => `${r.spec.method} ${r.spec.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(documented.sort()).toEqual(mounted.sort());
    // Every layer the router actually serves comes from a route spec: nothing is mounted undocumented.
    const layers = createRouter(app.deps).stack.flatMap((layer) =>
      // Routes mount string paths; a RegExp layer would show as its source and fail the comparison.
      layer.methods
        .filter((m) => m !== 'HEAD')
        .map((m) => `${m.toLowerCase()} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
    );
    expect(layers.sort()).toEqual(mounted.sort());
    expect(new Set(allRoutes.map((r) => r.spec.operationId)).size).toBe(allRoutes.length);
  });
});

/** Batch bodies are only arrays in their route schema (items are checked one by one): their items are checked here. */
const BATCH_ITEM_SCHEMAS: Record<string, v.GenericSchema> = {
  sendBatch: BatchEmailSchema,
  createContactsBatch: CreateContactBodySchema,
};

const problems = (schema: v.GenericSchema, value: unknown) => {
  const result = v.safeParse(schema, value);
  return result.success ? [] : result.issues.map((issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
};

describe("the reference's summaries and examples", () => {
  it('every operation has a summary, a response example, and a request example when it takes a body', async () => {
    const res = await app.request('GET', '/openapi.json');
    const lacking: string[] = [];
    for (const [path, operations] of Object.entries(res.body.paths as OpenAPIV3_1.PathsObject)) {
      for (const [method, operation] of Object.entries(operations as Record<string, OpenAPIV3_1.OperationObject>)) {
        const name = `${method} ${path}`;
        if (!operation.summary?.trim()) lacking.push(`${name}: summary`);
        const body = (operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content['application/json'];
        if (body && Object.keys(body.examples ?? {}).length === 0) lacking.push(`${name}: request example`);
        const [, success] = Object.entries(operation.responses ?? {}).find(([status]) => status !== 'default')!;
        if (
          Object.keys((success as OpenAPIV3_1.ResponseObject).content?.['application/json']?.examples ?? {}).length ===
          0
        )
          lacking.push(`${name}: response example`);
      }
    }
    expect(lacking).toEqual([]);
  });

  it("every example is valid for the route's own schemas, so it cannot drift from the contract", () => {
    const invalid = allRoutes.flatMap(({ spec }) => {
      const [, responseSchema] = Object.entries(spec.responses)[0]!;
      const request = spec.examples?.request;
      const items = BATCH_ITEM_SCHEMAS[spec.operationId];
      return [
        ...(spec.body && request !== undefined ? problems(spec.body, request) : []).map(
          (p) => `${spec.operationId} request ${p}`,
        ),
        ...(items && Array.isArray(request)
          ? request.flatMap((item, index) =>
              problems(items, item).map((p) => `${spec.operationId} request[${index}] ${p}`),
            )
          : []),
        ...(spec.examples ? problems(responseSchema, spec.examples.response) : []).map(
          (p) => `${spec.operationId} response ${p}`,
        ),
      ];
    });
    expect(invalid).toEqual([]);
    expect(Object.keys(BATCH_ITEM_SCHEMAS).every((id) => allRoutes.some((r) => r.spec.operationId === id))).toBe(true);
  });

  it('a broken example is caught', () => {
    const send = allRoutes.find((r) => r.spec.operationId === 'sendEmail')!.spec;
    expect(problems(send.body!, { ...(send.examples!.request as object), from: 'not an address' })).not.toEqual([]);
    expect(problems(Object.values(send.responses)[0]!, { id: 're_123' })).not.toEqual([]);
  });
});
