import { createHash } from 'node:crypto';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../../server/http/router.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const email = { from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't' };

describe('authentication', () => {
  it('answers a missing key with 401 missing_api_key', async () => {
    const res = await app.request('GET', '/emails');
    expect(res.status).toBe(401);
    expect(res.body.name).toBe('missing_api_key');
  });

  it('answers an unknown key with 403 invalid_api_key', async () => {
    const res = await app.request('GET', '/emails', { token: 're_doesnotexist' });
    expect(res.status).toBe(403);
    expect(res.body.name).toBe('invalid_api_key');
  });

  it('refuses a revoked key at once', async () => {
    const { token } = await app.createTeamWithKey();
    const second = await app.request('POST', '/api-keys', { token, body: { name: 'temp' } });
    expect(second.status).toBe(201);
    expect((await app.request('GET', '/api-keys', { token: second.body.token })).status).toBe(200);
    expect((await app.request('DELETE', `/api-keys/${second.body.id}`, { token })).status).toBe(200);
    const res = await app.request('GET', '/api-keys', { token: second.body.token });
    expect(res.status).toBe(403);
    expect(res.body.name).toBe('invalid_api_key');
  });

  it('stores only the SHA-256 of a token, never the token', async () => {
    const { token, keyId } = await app.createTeamWithKey();
    const client = new pg.Client({ connectionString: app.databaseUrl });
    await client.connect();
    const { rows } = await client.query('SELECT * FROM api_key WHERE id = $1', [keyId]);
    const dump = await client.query(`SELECT string_agg(t::text, ' ') AS all FROM api_key t`);
    await client.end();
    expect(rows[0].token_hash).toEqual(createHash('sha256').update(token).digest());
    expect(dump.rows[0].all).not.toContain(token);
    expect(token).toMatch(/^re_[0-9A-Za-z]{43}$/);
  });
});

describe('a sending-only key', () => {
  let token: string;
  beforeAll(async () => {
    ({ token } = await app.createTeamWithKey('sending_access'));
  });

  it('may send', async () => {
    expect((await app.request('POST', '/emails', { token, body: email })).status).toBe(200);
  });

  it.each([
    ['GET', '/emails'],
    ['GET', `/emails/${crypto.randomUUID()}`],
    ['DELETE', `/emails/${crypto.randomUUID()}`],
    ['GET', '/api-keys'],
    ['POST', '/api-keys'],
    ['DELETE', `/api-keys/${crypto.randomUUID()}`],
    ['GET', '/logs'],
    ['GET', '/suppressions'],
  ])('gets 403 restricted_api_key on %s %s', async (method, path) => {
    const res = await app.request(method, path, { token, body: method === 'POST' ? { name: 'x' } : undefined });
    expect(res.status).toBe(403);
    expect(res.body.name).toBe('restricted_api_key');
  });

  it('is admitted only by routes under /emails', () => {
    const admitting = allRoutes.filter((r) => r.spec.permission === 'sending_access');
    expect(admitting.length).toBeGreaterThan(0);
    for (const route of admitting) expect(route.spec.path).toMatch(/^\/emails(\/|$)/);
    const readsOfTheArchive = admitting.filter((r) => r.spec.method === 'get' || r.spec.method === 'delete');
    expect(readsOfTheArchive).toEqual([]);
  });
});

describe('GET /health', () => {
  it('needs no key and reports the database', async () => {
    const res = await app.request('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body.database).toEqual({ ok: true });
    expect(res.body.jobs).toMatchObject({ backlog: expect.any(Array) });
  });
});
