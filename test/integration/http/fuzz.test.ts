import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { ID } from '../../../server/http/examples.js';
import { startTestApp } from '../../support/test-app.js';

/**
 * Every POST, PATCH and PUT operation of /openapi.json, driven over HTTP with malformed bodies:
 * no answer may be a 5xx, and every refusal is the `{statusCode, name, message}` envelope.
 * Mutations start from each operation's documented example, so many pass validation and reach the
 * services. Seeded and bounded; a failure names the operation and the shrunk case.
 */

// FUZZ_RUNS and FUZZ_SEED explore further by hand; the suite runs the fixed seed.
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261207);

// DNS goes nowhere (domain checks answer at once), and the example webhook host is trusted without a lookup: loopback only.
const app = await startTestApp({
  env: {
    POSTLANE_DNS_SERVERS: '127.0.0.1:9',
    POSTLANE_DNS_TIMEOUT_MS: '100',
    POSTLANE_WEBHOOK_ALLOWED_HOSTS: 'hooks.acme.dev',
  },
});
afterAll(() => app.close());
const { token } = await app.createTeamWithKey('full_access', { verifiedDomains: ['acme.dev'] });

interface Operation {
  method: string;
  path: string;
  operationId: string;
  example: unknown;
}

const document = (await app.request('GET', '/openapi.json')).body as {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: { name: string; in: string }[];
        requestBody?: { content: Record<string, { examples?: { example: { value: unknown } } }> };
      }
    >
  >;
};
const operations: Operation[] = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods)
    .filter(([method]) => ['post', 'patch', 'put'].includes(method))
    .map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      operationId: op.operationId,
      example: op.requestBody?.content['application/json']?.examples?.example.value ?? {},
    })),
);

/**
 * Real records in place of the examples' ids (created from each collection's own example, in an
 * order that lets later examples name earlier records), so mutated bodies run past the lookups.
 */
const ids = new Map<string, string>();
const CREATION_ORDER = [
  '/contact-properties',
  '/topics',
  '/segments',
  '/audiences',
  '/templates',
  '/contacts',
  '/broadcasts',
  '/webhooks',
  '/emails',
  '/api-keys',
];
const EXAMPLE_IDS: Record<string, string> = {
  '/domains': ID.domain,
  '/contact-properties': ID.contactProperty,
  '/topics': ID.topic,
  '/segments': ID.segment,
  '/templates': ID.template,
  '/contacts': ID.contact,
  '/broadcasts': ID.broadcast,
  '/webhooks': ID.webhook,
  '/emails': ID.email,
  '/api-keys': ID.apiKey,
};
const ours = (value: unknown): unknown =>
  JSON.parse(
    Object.entries(EXAMPLE_IDS).reduce(
      (json, [collection, id]) => json.replaceAll(id, ids.get(collection) ?? id),
      JSON.stringify(value),
    ),
  );
await app.request('POST', '/contact-properties', { token, body: { key: 'seats', type: 'number' } });
ids.set('/domains', (await app.request('GET', '/domains', { token })).body.data[0].id);
for (const collection of CREATION_ORDER) {
  const op = operations.find((o) => o.method === 'POST' && o.path === collection)!;
  const created = await app.request('POST', collection, { token, body: ours(op.example) });
  if (typeof created.body?.id !== 'string') throw new Error(`fixture ${collection}: ${created.status} ${created.text}`);
  ids.set(collection, created.body.id);
}
for (const op of operations) op.example = ours(op.example);
/** Each `{param}` is a record of the collection named just before it (`/contacts/{id}/segments/{segmentId}`), or a random id. */
const concretePath = (path: string) =>
  path
    .split('/')
    .map((part, i, parts) => (part.startsWith('{') ? (ids.get(`/${parts[i - 1]}`) ?? randomUUID()) : part))
    .join('/');

/** Every path into the example, a few levels deep: where a mutation lands. */
function pathsOf(value: unknown, prefix: string[] = [], depth = 0): string[][] {
  if (depth === 4 || value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => [
    [...prefix, key],
    ...pathsOf(item, [...prefix, key], depth + 1),
  ]);
}

/** A copy with `value` at `path`; defined rather than assigned, so `__proto__` becomes an own key as JSON.parse makes it. */
function setAt(root: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = (Array.isArray(root) ? [...root] : { ...(root as object) }) as Record<string, unknown>;
  Object.defineProperty(copy, path[0]!, {
    value: setAt(copy[path[0]!], path.slice(1), value),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}

const badStrings = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfff',
    '\udbff\udbff',
    '\uFEFF',
    '%00',
    '{{{x}}}',
    '<script>',
    "'; drop table email; --",
    '../../etc/passwd',
    '2024-13-45T99:99:99Z',
    'a@b',
    '@',
    '<>',
    'NaN',
    '-1',
    'x\r\nBcc: victim@example.com',
    '\t',
    'jane@example.com\u0000',
  ),
  fc.integer({ min: 4_000, max: 1_200_000 }).map((n) => 'x'.repeat(n)),
);
const badValues = fc.oneof(
  badStrings,
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER * 8, -1, 0, 1e308, 0.5),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
);
const badKeys = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'k\u0000', '\ud800', '', 'toString', 'hasOwnProperty'),
  fc.string({ maxLength: 8 }),
);
const contentTypes = fc.constantFrom(
  null,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/json; charset=latin1',
  'application/xml',
  'application/json-patch+json',
  '*/*',
);

type Case =
  | { kind: 'json'; body: unknown }
  | { kind: 'deep'; at: string[]; depth: number; open: '[' | '{"a":' }
  | { kind: 'invalid-utf8'; at: string[]; bytes: number[] }
  | { kind: 'content-type'; contentType: string | null; body: unknown }
  | { kind: 'raw'; text: string };

/** Where the example holds a string: a bad string there keeps the rest valid, so it reaches the service. */
function stringPathsOf(example: unknown): string[][] {
  return pathsOf(example).filter(
    (path) =>
      typeof path.reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], example) === 'string',
  );
}

function cases(example: unknown): fc.Arbitrary<Case> {
  const at = fc.constantFrom<string[]>([], ...pathsOf(example));
  const strings = stringPathsOf(example);
  return fc.oneof(
    ...(strings.length > 0
      ? [
          {
            weight: 4,
            arbitrary: fc.record({
              kind: fc.constant('json' as const),
              body: fc
                .tuple(fc.constantFrom(...strings), badStrings)
                .map(([path, value]) => setAt(example, path, value)),
            }),
          },
        ]
      : []),
    fc.record({ kind: fc.constant('json' as const), body: fc.jsonValue({ maxDepth: 4 }) }),
    fc.record({
      kind: fc.constant('json' as const),
      body: fc.tuple(at, badValues).map(([path, value]) => setAt(example, path, value)),
    }),
    fc.record({
      kind: fc.constant('json' as const),
      body: fc.tuple(at, badKeys, badValues).map(([path, key, value]) => setAt(example, [...path, key], value)),
    }),
    fc.record({
      kind: fc.constant('json' as const),
      body: fc.constantFrom([example], [example, example], { 0: example }, [], [[]]),
    }),
    fc.record({
      kind: fc.constant('deep' as const),
      at,
      depth: fc.integer({ min: 1, max: 3000 }),
      open: fc.constantFrom('[' as const, '{"a":' as const),
    }),
    fc.record({
      kind: fc.constant('invalid-utf8' as const),
      at,
      bytes: fc.array(fc.constantFrom(0xff, 0xfe, 0xc0, 0xc3, 0xed, 0xa0, 0x80, 0x00), { minLength: 1, maxLength: 4 }),
    }),
    fc.record({
      kind: fc.constant('content-type' as const),
      contentType: contentTypes,
      body: fc.constantFrom(example, {}, ''),
    }),
    fc.record({
      kind: fc.constant('raw' as const),
      text: fc.constantFrom(
        '',
        ' ',
        '{',
        '{"a":',
        'null',
        '1',
        '"x"',
        'true',
        '[',
        '{}}',
        '{"a":1,}',
        "{'a':1}",
        '\u0000',
        '\ufeff{}',
      ),
    }),
  );
}

const MARK = '"\u0001mark\u0001"';

/** A case as bytes on the wire, with its content type (null: none sent). */
function encode(c: Case, example: unknown): { contentType: string | null; body: Buffer } {
  switch (c.kind) {
    case 'json':
      return { contentType: 'application/json', body: Buffer.from(JSON.stringify(c.body) ?? '') };
    case 'deep': {
      const close = c.open === '[' ? ']' : '}';
      const text = JSON.stringify(setAt(example, c.at, '\u0001mark\u0001')).replace(
        MARK,
        `${c.open.repeat(c.depth)}1${close.repeat(c.depth)}`,
      );
      return { contentType: 'application/json', body: Buffer.from(text) };
    }
    case 'invalid-utf8': {
      const [before, after] = JSON.stringify(setAt(example, c.at, '\u0001mark\u0001')).split(MARK) as [string, string];
      return {
        contentType: 'application/json',
        body: Buffer.concat([Buffer.from(`${before}"`), Buffer.from(c.bytes), Buffer.from(`"${after}`)]),
      };
    }
    case 'content-type':
      return {
        contentType: c.contentType,
        body: Buffer.from(typeof c.body === 'string' ? c.body : JSON.stringify(c.body)),
      };
    case 'raw':
      return { contentType: 'application/json', body: Buffer.from(c.text) };
  }
}

/** Throws, naming the operation, unless the answer is below 500 and every refusal is the error envelope. */
async function check(label: string, res: Response): Promise<void> {
  const text = await res.text();
  const problem = (what: string) => new Error(`${label}: ${what}: ${res.status} ${text.slice(0, 300)}`);
  if (res.status >= 500) throw problem('server error');
  if (res.status < 400) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw problem('not JSON');
  }
  const { statusCode, name, message, ...rest } = parsed as Record<string, unknown>;
  if (
    statusCode !== res.status ||
    typeof name !== 'string' ||
    typeof message !== 'string' ||
    Object.keys(rest).length > 0
  )
    throw problem('not the error envelope');
}

describe('malformed bodies never reach a 5xx', () => {
  for (const op of operations) {
    it(`${op.method} ${op.path} (${op.operationId})`, { timeout: 120_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(cases(op.example), async (c) => {
          const { contentType, body } = encode(c, op.example);
          const headers: Record<string, string> = { authorization: `Bearer ${token}` };
          if (contentType) headers['content-type'] = contentType;
          await check(
            `${op.method} ${op.path}`,
            await fetch(`${app.url}${concretePath(op.path)}`, { method: op.method, headers, body }),
          );
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: false },
      );
    });
  }
});

/** Path and query values as sent on the wire (already percent-encoded): NUL, broken UTF-8, a lone surrogate's bytes, traversal, CRLF. */
const badParams = fc.oneof(
  fc.string().map(encodeURIComponent),
  fc.constantFrom(
    '%00',
    'a%00b%40example.com',
    '%ED%A0%80',
    '%FF',
    '%',
    '%25',
    '.',
    '..',
    '%2F',
    '-1',
    '0',
    '99999999999999999999',
    '1e3',
    '%0D%0ABcc%3A%20a%40b.c',
    'x'.repeat(5000),
  ),
);

describe('malformed path and query parameters never reach a 5xx', () => {
  // Never a real id: these operations include deletes.
  const withParams = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, op]) => {
      const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      return path.includes('{') || query.length > 0
        ? [{ method: method.toUpperCase(), path, query, operationId: op.operationId }]
        : [];
    }),
  );
  for (const op of withParams) {
    it(`${op.method} ${op.path} (${op.operationId})`, { timeout: 60_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(
          badParams,
          fc.array(badParams, { minLength: op.query.length, maxLength: op.query.length }),
          async (param, values) => {
            const query = op.query.map((name, i) => `${name}=${values[i]}`).join('&');
            const url = `${app.url}${op.path.replace(/\{\w+\}/g, param)}${query ? `?${query}` : ''}`;
            const body = ['POST', 'PATCH', 'PUT'].includes(op.method) ? '{}' : undefined;
            await check(
              `${op.method} ${op.path}`,
              await fetch(url, {
                method: op.method,
                headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
                body,
              }),
            );
          },
        ),
        { numRuns: Math.ceil(RUNS / 2), seed: SEED, endOnFailure: false },
      );
    });
  }
});
