import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();
beforeAll(async () => {
  await app.request('POST', '/contact-properties', {
    token: app.token,
    body: { key: 'plan', type: 'string', fallback_value: 'free' },
  });
  await app.request('POST', '/contact-properties', { token: app.token, body: { key: 'age', type: 'number' } });
});

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const sql = async <T>(query: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);
const eventsFor = (contactId: string) =>
  sql<{ type: string; payload: Record<string, unknown> }>(
    `SELECT type, payload FROM event WHERE team_id = ? AND payload->>'id' = ? ORDER BY created_at, type`,
    [app.teamId, contactId],
  );
const create = (body: Record<string, unknown>, t = app.token) => app.request('POST', '/contacts', { token: t, body });

describe('contacts', () => {
  it('creates, reads by id and by email (case-insensitive, literal + and @), updates and deletes', async () => {
    const email = unique('Jane+tag');
    const created = await create({ email, first_name: 'Jane', properties: { age: 31 } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ object: 'contact', id: expect.any(String) });
    const id = created.body.id;

    const byEmail = await app.request('GET', `/contacts/${email.toUpperCase()}`, { token: app.token });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body).toEqual({
      object: 'contact',
      id,
      email: email.toLowerCase(),
      first_name: 'Jane',
      last_name: null,
      created_at: expect.any(String),
      unsubscribed: false,
      properties: { plan: { type: 'string', value: 'free' }, age: { type: 'number', value: 31 } },
    });
    expect((await app.request('GET', `/contacts/${id}`, { token: app.token })).body.id).toBe(id);
    expect((await app.request('GET', `/contacts/${encodeURIComponent(email)}`, { token: app.token })).body.id).toBe(id);

    const patched = await app.request('PATCH', `/contacts/${email}`, {
      token: app.token,
      body: { last_name: 'Doe', properties: { plan: 'pro' } },
    });
    expect(patched.body).toEqual({ object: 'contact', id });
    const after = (await app.request('GET', `/contacts/${id}`, { token: app.token })).body;
    expect(after.last_name).toBe('Doe');
    expect(after.properties.plan).toEqual({ type: 'string', value: 'pro' });

    const deleted = await app.request('DELETE', `/contacts/${id}`, { token: app.token });
    expect(deleted.body).toEqual({ object: 'contact', id, contact: id, deleted: true });
    expect((await app.request('GET', `/contacts/${id}`, { token: app.token })).status).toBe(404);
    expect((await eventsFor(id)).map((e) => e.type)).toEqual(['contact.created', 'contact.updated', 'contact.deleted']);
  });

  it('answers a known address with its id and changes nothing', async () => {
    const email = unique('again');
    const first = await create({ email, first_name: 'A' });
    const second = await create({ email: email.toUpperCase(), first_name: 'B' });
    expect(second.body.id).toBe(first.body.id);
    expect((await app.request('GET', `/contacts/${first.body.id}`, { token: app.token })).body.first_name).toBe('A');
  });

  it('refuses unknown property keys and values of the wrong type with 422', async () => {
    const unknown = await create({ email: unique('p'), properties: { nope: 'x' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toMatch(/^properties\.nope: /);
    const wrongType = await create({ email: unique('p'), properties: { age: 'old' } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.message).toBe('properties.age: must be a number');
    expect((await create({ email: 'Jane <jane@example.com>' })).status).toBe(422);
  });

  it('emits nothing and keeps updated_at when a write restates stored values', async () => {
    const email = unique('same');
    const { id } = (await create({ email, first_name: 'Same', properties: { age: 3 } })).body;
    await app.request('PATCH', `/contacts/${id}`, {
      token: app.token,
      body: { first_name: 'Same', properties: { age: 3 }, unsubscribed: false },
    });
    const [row] = await sql<{ created_at: Date; updated_at: Date }>(
      'SELECT created_at, updated_at FROM contact WHERE id = ?',
      [id],
    );
    expect(row!.updated_at).toEqual(row!.created_at);
    expect((await eventsFor(id)).map((e) => e.type)).toEqual(['contact.created']);
  });

  it('unsubscribes and re-subscribes with their events, carrying the contact data and source', async () => {
    const { id } = (await create({ email: unique('unsub'), first_name: 'U' })).body;
    await app.request('PATCH', `/contacts/${id}`, { token: app.token, body: { unsubscribed: true } });
    await app.request('PATCH', `/contacts/${id}`, { token: app.token, body: { unsubscribed: false } });
    const events = await eventsFor(id);
    expect(events.map((e) => e.type)).toEqual([
      'contact.created',
      'contact.unsubscribed',
      'contact.updated',
      'contact.resubscribed',
      'contact.updated',
    ]);
    expect(events[1]!.payload).toEqual({
      id,
      email: expect.stringMatching(/^unsub-/),
      first_name: 'U',
      last_name: null,
      unsubscribed: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      source: 'api',
    });
  });

  it('lists newest first with pagination and include facets', async () => {
    const { token: own } = await app.createTeamWithKey();
    const topic = (
      await app.request('POST', '/topics', { token: own, body: { name: 'News', default_subscription: 'opt_in' } })
    ).body;
    for (const name of ['a', 'b', 'c']) await create({ email: unique(name) }, own);
    const page1 = await app.request('GET', '/contacts?limit=2&include=properties,topics', { token: own });
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.has_more).toBe(true);
    expect(page1.body.data[0].properties).toEqual({});
    expect(page1.body.data[0].topics).toEqual([
      { id: topic.id, name: 'News', description: null, subscription: 'opt_in', explicit: false, visibility: 'private' },
    ]);
    const page2 = await app.request('GET', `/contacts?limit=2&after=${page1.body.data[1].id}`, { token: own });
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.data[0]).not.toHaveProperty('topics');
    expect(page2.body.has_more).toBe(false);
    expect((await app.request('GET', '/contacts?include=segments', { token: own })).status).toBe(422);
  });

  it("answers 404 for another team's contact", async () => {
    const { token: other } = await app.createTeamWithKey();
    const email = unique('mine');
    const { id } = (await create({ email })).body;
    for (const ref of [id, email]) {
      expect((await app.request('GET', `/contacts/${ref}`, { token: other })).status).toBe(404);
      expect((await app.request('PATCH', `/contacts/${ref}`, { token: other, body: { first_name: 'x' } })).status).toBe(
        404,
      );
      expect((await app.request('DELETE', `/contacts/${ref}`, { token: other })).status).toBe(404);
    }
  });

  it('records an erasure request on DELETE with erase=true', async () => {
    const email = unique('erase');
    const { id } = (await create({ email })).body;
    expect((await app.request('DELETE', `/contacts/${id}?erase=true`, { token: app.token })).status).toBe(200);
    expect(await sql('SELECT email FROM erasure_request WHERE team_id = ?', [app.teamId])).toEqual([{ email }]);
  });
});

describe('contact topics', () => {
  it('reads effective choices, takes the bare array and the {topics} form, and emits flips only', async () => {
    const { token: own, teamId: ownTeam } = await app.createTeamWithKey();
    const news = (
      await app.request('POST', '/topics', {
        token: own,
        body: { name: 'News', default_subscription: 'opt_in', visibility: 'public' },
      })
    ).body;
    const promo = (
      await app.request('POST', '/topics', { token: own, body: { name: 'Promo', default_subscription: 'opt_out' } })
    ).body;
    const { id } = (await create({ email: unique('t') }, own)).body;

    const bare = await app.request('PATCH', `/contacts/${id}/topics`, {
      token: own,
      body: [
        { id: news.id, subscription: 'opt_in' },
        { id: promo.id, subscription: 'opt_in' },
      ],
    });
    expect(bare.status).toBe(200);
    expect(bare.body.topics.find((t: { id: string }) => t.id === news.id)).toMatchObject({
      subscription: 'opt_in',
      explicit: true,
    });
    const wrapped = await app.request('PATCH', `/contacts/${id}/topics`, {
      token: own,
      body: { topics: [{ id: news.id, subscription: 'opt_out' }] },
    });
    expect(wrapped.status).toBe(200);

    const list = await app.request('GET', `/contacts/${id}/topics`, { token: own });
    expect(
      list.body.data.map((t: { name: string; subscription: string; explicit: boolean }) => [
        t.name,
        t.subscription,
        t.explicit,
      ]),
    ).toEqual([
      ['Promo', 'opt_in', true],
      ['News', 'opt_out', true],
    ]);
    const events = await sql<{ type: string; payload: { topic_name: string } }>(
      `SELECT type, payload FROM event WHERE team_id = ? AND type LIKE 'contact.topic%' ORDER BY created_at, payload->>'topic_name'`,
      [ownTeam],
    );
    // Explicit opt_in to News restated the default: no flip.
    expect(events.map((e) => [e.type, e.payload.topic_name])).toEqual([
      ['contact.topic_opt_in', 'Promo'],
      ['contact.topic_opt_out', 'News'],
    ]);

    const unknown = await app.request('PATCH', `/contacts/${id}/topics`, {
      token: own,
      body: [{ id: '00000000-0000-4000-8000-000000000000', subscription: 'opt_in' }],
    });
    expect(unknown.status).toBe(422);
  });

  it('a topic default change flips contacts without a choice of their own, with events', async () => {
    const { token: own, teamId: ownTeam } = await app.createTeamWithKey();
    const topic = (
      await app.request('POST', '/topics', { token: own, body: { name: 'Digest', default_subscription: 'opt_out' } })
    ).body;
    const chooser = (
      await create({ email: unique('chooser'), topics: [{ id: topic.id, subscription: 'opt_out' }] }, own)
    ).body.id;
    const follower = (await create({ email: unique('follower') }, own)).body.id;
    expect(
      (
        await app.request('PATCH', `/topics/${topic.id}`, {
          token: own,
          body: { id: topic.id, default_subscription: 'opt_in' },
        })
      ).status,
    ).toBe(200);
    expect((await app.request('GET', `/contacts/${follower}/topics`, { token: own })).body.data[0]).toMatchObject({
      subscription: 'opt_in',
      explicit: false,
    });
    expect((await app.request('GET', `/contacts/${chooser}/topics`, { token: own })).body.data[0]).toMatchObject({
      subscription: 'opt_out',
      explicit: true,
    });
    const flips = await sql<{ id: string }>(
      `SELECT payload->>'id' AS id FROM event WHERE team_id = ? AND type = 'contact.topic_opt_in'`,
      [ownTeam],
    );
    expect(flips).toEqual([{ id: follower }]);
  });
});

describe('plan cap', () => {
  it('holds under concurrent creations, and one address created twice at once is one contact', async () => {
    const { token: own, teamId: ownTeam } = await app.createTeamWithKey();
    await sql('UPDATE team SET contact_limit = 5 WHERE id = ?', [ownTeam]);
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create({ email: `racer${i}@example.com` }, own).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);

    const { token: fresh } = await app.createTeamWithKey();
    const same = await Promise.all(Array.from({ length: 5 }, () => create({ email: 'twin@example.com' }, fresh)));
    expect(new Set(same.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(same.map((r) => r.body.id)).size).toBe(1);
  });

  it('needs a full-access key', async () => {
    const { token: sending } = await app.createTeamWithKey('sending_access');
    const res = await create({ email: unique('s') }, sending);
    expect(res.status).toBe(403);
    expect(res.body.name).toBe('restricted_api_key');
  });

  it('refuses new contacts past contact_limit with 403, while existing ones still update', async () => {
    const { token: own, teamId: ownTeam } = await app.createTeamWithKey();
    await sql('UPDATE team SET contact_limit = 2 WHERE id = ?', [ownTeam]);
    const a = unique('cap-a');
    expect((await create({ email: a }, own)).status).toBe(201);
    expect((await create({ email: unique('cap-b') }, own)).status).toBe(201);
    const refused = await create({ email: unique('cap-c') }, own);
    expect(refused.status).toBe(403);
    expect(refused.body.name).toBe('plan_limit_reached');
    expect((await app.request('PATCH', `/contacts/${a}`, { token: own, body: { first_name: 'Still' } })).status).toBe(
      200,
    );

    const strict = await app.request('POST', '/contacts/batch?on_conflict=upsert', {
      token: own,
      body: [{ email: a, last_name: 'Updated' }, { email: unique('cap-d') }],
    });
    expect(strict.body).toMatchObject({
      statusCode: 403,
      name: 'plan_limit_reached',
      message: expect.stringMatching(/^contacts\.1: .*limit of 2 contacts/),
    });
    expect((await app.request('GET', `/contacts/${a}`, { token: own })).body.last_name).toBeNull();
    const batch = await app.request('POST', '/contacts/batch?on_conflict=upsert', {
      token: own,
      body: [{ email: a, last_name: 'Updated' }, { email: unique('cap-d') }],
      headers: { 'x-batch-validation': 'permissive' },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.counts).toEqual({ created: 0, updated: 1, skipped: 0, failed: 1 });
    expect(batch.body.errors).toEqual([{ index: 1, message: expect.stringContaining('limit of 2 contacts') }]);
    const segment = (await app.request('POST', '/audiences', { token: own, body: { name: 'Legacy' } })).body;
    expect(
      (await app.request('POST', `/audiences/${segment.id}/contacts`, { token: own, body: { email: unique('cap-e') } }))
        .status,
    ).toBe(403);
  });
});
