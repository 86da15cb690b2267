import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { Route } from './route.js';
import { ErrorResponseSchema } from './schemas/common.schemas.js';

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[] };

const convert = (schema: v.GenericSchema, typeMode: 'input' | 'output'): JsonSchema => {
  // Transforms (address parsing, number coercion) have no JSON Schema form; the input side documents them.
  const { $schema: _ignored, ...json } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    typeMode,
    errorMode: 'ignore',
  }) as JsonSchema;
  return json;
};

const ERROR_RESPONSE = {
  description: 'Error: `{statusCode, name, message}`',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

function parameters(schema: v.GenericSchema | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = convert(schema, 'input');
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}

/** OpenAPI 3.1 media-type `examples` (Swagger UI shows them instead of ones made up from the schema). */
const examples = (value: unknown) => (value === undefined ? {} : { examples: { example: { value } } });

/** OpenAPI 3.1 from the same route specs the router mounts, so the document cannot drift. */
export function buildOpenApi(routes: readonly Route[], serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { spec } of routes) {
    const path = spec.path.replace(/:(\w+)/g, '{$1}');
    const [status, response] = Object.entries(spec.responses)[0]!;
    paths[path] ??= {};
    paths[path][spec.method] = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: spec.tags,
      ...(spec.permission === 'public' ? { security: [] } : {}),
      parameters: [...parameters(spec.params, 'path'), ...parameters(spec.query, 'query')],
      ...(spec.body
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: convert(spec.body, 'input'), ...examples(spec.examples?.request) },
              },
            },
          }
        : spec.multipart
          ? {
              requestBody: {
                required: true,
                content: { 'multipart/form-data': { schema: convert(spec.multipart, 'input') } },
              },
            }
          : {}),
      responses: {
        [status]: {
          description: 'Success',
          content: {
            'application/json': { schema: convert(response, 'output'), ...examples(spec.examples?.response) },
          },
        },
        default: ERROR_RESPONSE,
      },
      ...(spec.permission === 'sending_access' ? { 'x-postlane-permission': 'sending_access' } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Postlane API',
      version: '1.0.0',
      description: 'Self-hosted email sending with a Resend-compatible HTTP API.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer re_…`' },
      },
      schemas: { Error: convert(ErrorResponseSchema, 'output') },
    },
    paths,
  };
}
