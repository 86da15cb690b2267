import type { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const ok = <T>(result: { data: T | null; error: unknown }): T => {
  expect(result.error).toBeNull();
  return result.data!;
};

async function sdk(): Promise<Resend> {
  return app.sdk((await app.createTeamWithKey()).token);
}

describe('apiKeys.update through the official SDK', () => {
  it('renames a key, which keeps working; refuses a blank name; another team’s or a revoked key is 404', async () => {
    const resend = await sdk();
    const created = ok(await resend.apiKeys.create({ name: 'ci' }));
    expect(ok(await resend.apiKeys.update(created.id, { name: '  deploys  ' }))).toEqual({
      object: 'api_key',
      id: created.id,
    });
    const listed = ok(await resend.apiKeys.list());
    expect(listed.data.find((k) => k.id === created.id)?.name).toBe('deploys');
    // The renamed key still authenticates.
    expect((await app.sdk(created.token).apiKeys.list()).error).toBeNull();
    expect((await resend.apiKeys.update(created.id, { name: ' ' })).error).toMatchObject({
      statusCode: 422,
      message: 'name: must not be empty',
    });
    const other = await sdk();
    expect((await other.apiKeys.update(created.id, { name: 'mine' })).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
    ok(await resend.apiKeys.remove(created.id));
    expect((await resend.apiKeys.update(created.id, { name: 'again' })).error).toMatchObject({ statusCode: 404 });
  });
});

describe('oauthGrants through the official SDK', () => {
  it('lists none and revokes none: a self-hosted appliance has no OAuth applications', async () => {
    const resend = await sdk();
    expect(ok(await resend.oauthGrants.list())).toEqual({ object: 'list', has_more: false, data: [] });
    expect(ok(await resend.oauthGrants.list({ limit: 5 })).data).toEqual([]);
    expect((await resend.oauthGrants.revoke('grant_123')).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: 'OAuth grant not found',
    });
  });
});
