import { describe, expect, it } from 'vitest';
import { Event, Suppression } from '../../../server/entities/index.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

async function client() {
  const { token, teamId } = await app.createTeamWithKey();
  const resend = app.sdk(token);
  const events = (type: string) =>
    app.run(() => app.deps.orm.em.find(Event, { team: teamId, type }, { orderBy: { createdAt: 'asc' } }));
  return { token, teamId, resend, events };
}

describe('suppressions through the official SDK', () => {
  it('add, get by id or address, list with an origin filter, remove', async () => {
    const { resend, events } = await client();
    const added = await resend.suppressions.add({ email: 'Ann+news@Example.com' });
    expect(added.error).toBeNull();
    expect(added.data).toEqual({ object: 'suppression', id: expect.any(String) });
    const id = added.data!.id;

    const byId = await resend.suppressions.get(id);
    expect(byId.data).toEqual({
      object: 'suppression',
      id,
      email: 'ann+news@example.com',
      origin: 'manual',
      source_id: null,
      created_at: expect.any(String),
    });
    expect((await resend.suppressions.get('ANN+NEWS@example.com')).data?.id).toBe(id);

    expect((await resend.suppressions.add({ email: 'ann+news@example.com' })).data?.id).toBe(id);
    expect((await resend.suppressions.list({ origin: 'manual' })).data?.data.map((s) => s.id)).toEqual([id]);
    expect((await resend.suppressions.list({ origin: 'bounce' })).data?.data).toEqual([]);

    const removed = await resend.suppressions.remove('ann+news@example.com');
    expect(removed.data).toEqual({ object: 'suppression', id, deleted: true });
    expect((await resend.suppressions.get(id)).error).toMatchObject({ name: 'not_found' });
    expect((await resend.suppressions.remove(id)).error).toMatchObject({ name: 'not_found' });

    expect((await events('suppression.added')).map((e) => e.payload)).toEqual([
      {
        id,
        email: 'ann+news@example.com',
        origin: 'manual',
        source: 'api',
        source_id: null,
        created_at: expect.any(String),
      },
    ]);
    expect((await events('suppression.removed')).map((e) => e.payload)).toEqual([
      {
        id,
        email: 'ann+news@example.com',
        origin: 'manual',
        source: 'api',
        source_id: null,
        created_at: expect.any(String),
      },
    ]);
  });

  it('batch add returns entries in request order (existing ones included); batch remove lists only what it removed', async () => {
    const { resend } = await client();
    const first = await resend.suppressions.add({ email: 'b@example.com' });
    const batch = await resend.suppressions.batch.add({
      emails: ['a@example.com', 'B@example.com', 'c@example.com', 'a@example.com'],
    });
    expect(batch.error).toBeNull();
    const ids = batch.data!.data.map((d) => d.id);
    expect(ids[1]).toBe(first.data!.id);
    expect(ids[0]).toBe(ids[3]);
    expect(new Set(ids).size).toBe(3);

    const byEmail = await resend.suppressions.batch.remove({ emails: ['a@example.com', 'nobody@example.com'] });
    expect(byEmail.data?.data).toEqual([{ object: 'suppression', id: ids[0], deleted: true }]);
    const byId = await resend.suppressions.batch.remove({
      ids: [ids[1]!, ids[2]!, '00000000-0000-4000-8000-000000000000'],
    });
    expect(byId.data?.data.map((d) => d.id).sort()).toEqual([ids[1], ids[2]].sort());
    expect((await resend.suppressions.list()).data?.data).toEqual([]);
  });

  it("another team's entries answer 404 and never list", async () => {
    const owner = await client();
    const other = await client();
    const { data } = await owner.resend.suppressions.add({ email: 'private@example.com' });
    expect((await other.resend.suppressions.get(data!.id)).error).toMatchObject({ statusCode: 404 });
    expect((await other.resend.suppressions.get('private@example.com')).error).toMatchObject({ statusCode: 404 });
    expect((await other.resend.suppressions.remove(data!.id)).error).toMatchObject({ statusCode: 404 });
    expect((await other.resend.suppressions.batch.remove({ ids: [data!.id] })).data?.data).toEqual([]);
    expect((await other.resend.suppressions.list()).data?.data).toEqual([]);
    expect((await owner.resend.suppressions.get(data!.id)).data?.email).toBe('private@example.com');
  });

  it('refuses bad input with 422 and changes nothing', async () => {
    const { token, teamId } = await client();
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', '/suppressions', { email: 'Ann <ann@example.com>' }, /^email: must be a bare email address/],
      ['POST', '/suppressions', { email: 'not an address' }, /^email: /],
      ['POST', '/suppressions', { email: 'a@example.com', origin: 'bounce' }, /^origin: is not a supported field/],
      ['POST', '/suppressions/batch/add', { emails: [] }, /^emails: must hold at least one entry/],
      [
        'POST',
        '/suppressions/batch/add',
        { emails: Array(1001).fill('a@example.com') },
        /^emails: must hold at most 1000 entries/,
      ],
      [
        'POST',
        '/suppressions/batch/remove',
        { emails: ['a@example.com'], ids: ['00000000-0000-4000-8000-000000000000'] },
        /give either `emails` or `ids`/,
      ],
      ['POST', '/suppressions/batch/remove', {}, /give either `emails` or `ids`/],
      ['GET', '/suppressions?origin=spam', undefined, /^origin: must be one of bounce, complaint, manual, unsubscribe/],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await app.request(method, path, { token, body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}`).toBe(422);
      expect(res.body.message).toMatch(message);
    }
    expect(await app.run(() => app.deps.orm.em.count(Suppression, { team: teamId }))).toBe(0);
  });

  it('a sending key may not read or change the list', async () => {
    const { token } = await app.createTeamWithKey('sending_access');
    expect((await app.request('GET', '/suppressions', { token })).body.name).toBe('restricted_api_key');
    expect((await app.request('POST', '/suppressions', { token, body: { email: 'a@example.com' } })).body.name).toBe(
      'restricted_api_key',
    );
  });

  it('an added address is dropped from the next send', async () => {
    const { token, resend } = await client();
    await resend.suppressions.add({ email: 'gone@example.com' });
    const sent = await app.request('POST', '/emails', {
      token,
      body: { from: 'a@acme.test', to: 'Gone@example.com', subject: 'x', text: 'x' },
    });
    expect(sent.body.name).toBe('all_recipients_suppressed');
  });
});
