import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

describe('/api-keys', () => {
  it('creates a key whose token is shown once and never listed', async () => {
    const { token } = await app.createTeamWithKey();
    const created = await app.request('POST', '/api-keys', {
      token,
      body: { name: 'ci', permission: 'sending_access' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), token: expect.stringMatching(/^re_/) });
    const list = await app.request('GET', '/api-keys', { token });
    expect(list.body.object).toBe('list');
    const row = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(row).toMatchObject({ name: 'ci', permission: 'sending_access', domain_id: null, last_used_at: null });
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);
  });

  it('limits domain scope to sending keys, and to domains that exist', async () => {
    const { token } = await app.createTeamWithKey();
    const full = await app.request('POST', '/api-keys', { token, body: { name: 'x', domain_id: crypto.randomUUID() } });
    expect(full.status).toBe(422);
    expect(full.body.message).toBe('domain_id: only a sending_access key can be limited to a domain');
    const unknown = await app.request('POST', '/api-keys', {
      token,
      body: { name: 'x', permission: 'sending_access', domain_id: crypto.randomUUID() },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toBe('domain_id: no domain with this id');
  });

  it("answers another team's key with 404, exactly like a missing one", async () => {
    const mine = await app.createTeamWithKey();
    const theirs = await app.createTeamWithKey();
    const foreign = await app.request('DELETE', `/api-keys/${theirs.keyId}`, { token: mine.token });
    const missing = await app.request('DELETE', `/api-keys/${crypto.randomUUID()}`, { token: mine.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await app.request('GET', '/api-keys', { token: theirs.token })).status).toBe(200);
  });
});

describe('pagination', () => {
  it('pages newest first with after and before, and refuses cursors it did not return', async () => {
    const { token } = await app.createTeamWithKey();
    for (let i = 0; i < 5; i += 1) await app.request('POST', '/api-keys', { token, body: { name: `k${i}` } });
    const all = await app.request('GET', '/api-keys?limit=100', { token });
    expect(all.body.data).toHaveLength(6);
    expect(all.body.has_more).toBe(false);
    const names = all.body.data.map((k: { name: string }) => k.name);
    expect(names.slice(0, 5)).toEqual(['k4', 'k3', 'k2', 'k1', 'k0']);

    const first = await app.request('GET', '/api-keys?limit=2', { token });
    expect(first.body.data.map((k: { name: string }) => k.name)).toEqual(['k4', 'k3']);
    expect(first.body.has_more).toBe(true);
    const second = await app.request('GET', `/api-keys?limit=2&after=${first.body.data[1].id}`, { token });
    expect(second.body.data.map((k: { name: string }) => k.name)).toEqual(['k2', 'k1']);
    expect(second.body.has_more).toBe(true);
    const back = await app.request('GET', `/api-keys?limit=2&before=${second.body.data[0].id}`, { token });
    expect(back.body.data.map((k: { name: string }) => k.name)).toEqual(['k4', 'k3']);
    expect(back.body.has_more).toBe(false);

    const other = await app.createTeamWithKey();
    const foreignCursor = await app.request('GET', `/api-keys?after=${other.keyId}`, { token });
    expect(foreignCursor.status).toBe(422);
    expect(foreignCursor.body.name).toBe('validation_error');
  });

  it('defaults to 20 items', async () => {
    const { token } = await app.createTeamWithKey();
    for (let i = 0; i < 21; i += 1) await app.request('POST', '/api-keys', { token, body: { name: `k${i}` } });
    const page = await app.request('GET', '/api-keys', { token });
    expect(page.body.data).toHaveLength(20);
    expect(page.body.has_more).toBe(true);
  });
});
