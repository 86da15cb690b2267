import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp({ env: { POSTLANE_BODY_LIMIT_MB: '1', POSTLANE_STATEMENT_TIMEOUT_SECONDS: '1' } });

const expectError = (res: { status: number; body: unknown; headers: Headers }, status: number, name: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.body).toEqual({ statusCode: status, name, message: expect.any(String) });
};

describe('the error envelope', () => {
  it('answers an unknown route with 404 not_found', async () => {
    expectError(await app.request('GET', '/no-such-thing', { token: app.token }), 404, 'not_found');
  });

  it('answers a known path with the wrong method with 405 method_not_allowed', async () => {
    expectError(await app.request('PUT', '/emails', { token: app.token }), 405, 'method_not_allowed');
  });

  it('answers malformed JSON with 422 validation_error and writes nothing', async () => {
    const res = await app.request('POST', '/api-keys', { token: app.token, rawBody: '{"name": ' });
    expectError(res, 422, 'validation_error');
    expect(res.body.message).toBe('Invalid JSON body');
  });

  it('refuses a top-level JSON scalar', async () => {
    expectError(
      await app.request('POST', '/api-keys', { token: app.token, rawBody: '"just a string"' }),
      422,
      'validation_error',
    );
  });

  it('accepts a bodiless POST with a JSON content type (parsed as {})', async () => {
    const res = await app.request('POST', '/api-keys', { token: app.token });
    expectError(res, 422, 'missing_required_field');
    expect(res.body.message).toBe('Missing `name` field.');
  });

  it('names the invalid field', async () => {
    const res = await app.request('POST', '/api-keys', { token: app.token, body: { name: 'x', permission: 'admin' } });
    expectError(res, 422, 'validation_error');
    expect(res.body.message).toMatch(/^permission: /);
  });

  it('refuses unknown fields', async () => {
    const res = await app.request('POST', '/api-keys', { token: app.token, body: { name: 'x', team_id: 'mine' } });
    expectError(res, 422, 'validation_error');
    expect(res.body.message).toBe('team_id: is not a supported field');
  });

  it('checks the key before reading the body', async () => {
    expectError(await app.request('POST', '/emails', { rawBody: '{"broken": ' }), 401, 'missing_api_key');
  });

  it('refuses JSON nested deeper than 64 levels before reading any field', async () => {
    // The top-level object is level 1; `a` then holds levels 2 to n.
    const nested = (levels: number) => `{"name":"x","a":${'{"a":'.repeat(levels - 2)}{}${'}'.repeat(levels - 2)}}`;
    const deepest = await app.request('POST', '/api-keys', { token: app.token, rawBody: nested(64) });
    expectError(deepest, 422, 'validation_error');
    expect(deepest.body.message).toBe('a: is not a supported field');
    const deeper = await app.request('POST', '/api-keys', { token: app.token, rawBody: nested(65) });
    expectError(deeper, 422, 'validation_error');
    expect(deeper.body.message).toBe(`${Array(64).fill('a').join('.')}: JSON nested deeper than 64 levels`);
  });

  it('refuses a NUL or a lone surrogate anywhere in a body, keys included, and names where', async () => {
    const nul = await app.request('POST', '/contacts', {
      token: app.token,
      rawBody: '{"email":"a@example.com","properties":{"plan":"x\\u0000"}}',
    });
    expectError(nul, 422, 'validation_error');
    expect(nul.body.message).toBe('properties.plan: must not contain NUL characters');
    const key = await app.request('POST', '/contacts', {
      token: app.token,
      rawBody: '{"email":"a@example.com","properties":{"\\udc00":1}}',
    });
    expect(key.body.message).toBe('properties: keys must not contain broken characters (a lone UTF-16 surrogate)');
    expectError(
      await app.request('GET', '/contacts/a%00b%40example.com', { token: app.token }),
      422,
      'validation_error',
    );
  });

  it('answers an oversized body with 413', async () => {
    const res = await app.request('POST', '/api-keys', {
      token: app.token,
      rawBody: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expectError(res, 413, 'validation_error');
  });

  it('collapses duplicate and trailing slashes', async () => {
    const res = await app.request('GET', '//api-keys/', { token: app.token });
    expect(res.status).toBe(200);
  });

  it('gives every response a request id, and keeps a sane incoming one', async () => {
    const res = await app.request('GET', '/api-keys', { token: app.token, headers: { 'x-request-id': 'trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    const generated = await app.request('GET', '/api-keys', {
      token: app.token,
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives up on a statement that outlives POSTLANE_STATEMENT_TIMEOUT_SECONDS', async () => {
    await expect(app.deps.orm.em.fork().getConnection().execute('SELECT pg_sleep(3)')).rejects.toThrow(
      /statement timeout/,
    );
  });

  it('validates pagination parameters', async () => {
    expectError(await app.request('GET', '/api-keys?limit=0', { token: app.token }), 422, 'validation_error');
    expectError(await app.request('GET', '/api-keys?limit=101', { token: app.token }), 422, 'validation_error');
    expectError(await app.request('GET', '/api-keys?after=not-a-uuid', { token: app.token }), 422, 'validation_error');
    const both = await app.request('GET', `/api-keys?after=${crypto.randomUUID()}&before=${crypto.randomUUID()}`, {
      token: app.token,
    });
    expectError(both, 422, 'validation_error');
  });
});
