import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

let topicId: string;
const ids: Record<string, string> = {};

const app = useTestApp();
beforeAll(async () => {
  await app.request('POST', '/contact-properties', {
    token: app.token,
    body: { key: 'plan', type: 'string', fallback_value: 'free' },
  });
  await app.request('POST', '/contact-properties', { token: app.token, body: { key: 'seats', type: 'number' } });
  topicId = (
    await app.request('POST', '/topics', { token: app.token, body: { name: 'News', default_subscription: 'opt_in' } })
  ).body.id;
  const res = await app.request('POST', '/contacts/batch', {
    token: app.token,
    body: [
      { email: 'ann@acme.test', first_name: 'Ann', properties: { plan: 'pro', seats: 10 } },
      {
        email: 'bob@acme.test',
        first_name: 'Bob',
        properties: { seats: 2 },
        topics: [{ id: topicId, subscription: 'opt_out' }],
      },
      { email: 'cy%_@other.test', unsubscribed: true },
    ],
  });
  for (const [i, name] of ['ann', 'bob', 'cy'].entries()) ids[name] = res.body.data[i].id;
});

const membersOf = async (filter: unknown) => {
  const created = await app.request('POST', '/segments', { token: app.token, body: { name: 'f', filter } });
  expect(created.status).toBe(201);
  const segment = await app.request('GET', `/segments/${created.body.id}`, { token: app.token });
  const contacts = await app.request('GET', `/segments/${created.body.id}/contacts`, { token: app.token });
  const names = Object.entries(ids)
    .filter(([, id]) => contacts.body.data.some((c: { id: string }) => c.id === id))
    .map(([name]) => name);
  expect(segment.body.contact_count).toBe(names.length);
  return names.sort();
};
const all = (...conditions: unknown[]) => ({ match: 'all', conditions });

describe('segment filters, evaluated in SQL', () => {
  it.each([
    [all({ field: 'email', op: 'ends_with', value: '@ACME.test' }), ['ann', 'bob']],
    [all({ field: 'email', op: 'contains', value: '%_' }), ['cy']],
    [all({ field: 'first_name', op: 'eq', value: 'ann' }), ['ann']],
    [all({ field: 'first_name', op: 'neq', value: 'ann' }), ['bob', 'cy']],
    [all({ field: 'first_name', op: 'not_exists' }), ['cy']],
    [all({ field: 'first_name', op: 'starts_with', value: 'B' }), ['bob']],
    [all({ field: 'unsubscribed', op: 'eq', value: true }), ['cy']],
    [all({ field: 'unsubscribed', op: 'eq', value: 'false' }), ['ann', 'bob']],
    [all({ field: 'created_at', op: 'lt', value: '2000-01-01T00:00:00Z' }), []],
    [all({ field: 'properties.plan', op: 'eq', value: 'free' }), ['bob', 'cy']],
    [all({ field: 'properties.plan', op: 'exists' }), ['ann']],
    // Counted from contact_property_term: case-insensitive, and one contact matching twice counts once.
    [all({ field: 'properties.plan', op: 'eq', value: 'PRO' }), ['ann']],
    [
      {
        match: 'any',
        conditions: [
          { field: 'properties.plan', op: 'eq', value: 'pro' },
          { field: 'properties.plan', op: 'eq', value: 'Pro' },
          { field: 'properties.plan', op: 'eq', value: 'gold' },
        ],
      },
      ['ann'],
    ],
    [
      {
        match: 'any',
        conditions: [
          { field: 'properties.plan', op: 'eq', value: 'pro' },
          { field: 'properties.plan', op: 'eq', value: 'FREE' },
        ],
      },
      ['ann', 'bob', 'cy'],
    ],
    [all({ field: 'properties.seats', op: 'gte', value: 2 }), ['ann', 'bob']],
    [all({ field: 'properties.seats', op: 'gt', value: '5' }), ['ann']],
    [all({ field: `topics.${'TOPIC'}`, op: 'eq', value: 'opt_in' }), ['ann', 'cy']],
    [
      {
        match: 'any',
        conditions: [
          { field: 'first_name', op: 'eq', value: 'Ann' },
          { field: 'unsubscribed', op: 'eq', value: true },
        ],
      },
      ['ann', 'cy'],
    ],
    [
      all({ field: 'email', op: 'ends_with', value: 'acme.test' }, { field: 'properties.seats', op: 'lt', value: 5 }),
      ['bob'],
    ],
    // Values are data, never SQL.
    [all({ field: 'first_name', op: 'eq', value: "x' OR '1'='1" }), []],
    [all({ field: 'properties.plan', op: 'contains', value: "'; DELETE FROM contact; --" }), []],
  ])('filter %#', async (filter, expected) => {
    const resolved = JSON.parse(JSON.stringify(filter).replace('TOPIC', topicId));
    expect(await membersOf(resolved)).toEqual(expected);
  });

  it('still has every contact after the hostile values above', async () => {
    expect((await app.request('GET', '/contacts', { token: app.token })).body.data).toHaveLength(3);
  });

  it.each([
    [all({ field: 'phone', op: 'eq', value: 'x' }), /^filter\.conditions\.0\.field: /],
    [all({ field: 'email', op: 'gt', value: 'x' }), /^filter\.conditions\.0\.op: gt does not apply to email/],
    [
      all({ field: 'properties.missing', op: 'eq', value: 'x' }),
      /^filter\.conditions\.0\.field: properties\.missing is not/,
    ],
    [all({ field: 'properties.seats', op: 'eq', value: 'many' }), /^filter\.conditions\.0\.value: must be a number/],
    [all({ field: 'created_at', op: 'gt', value: 'yesterday' }), /value: must be an ISO 8601 time/],
    [all({ field: "email'; DROP TABLE contact; --", op: 'eq', value: 'x' }), /^filter\.conditions\.0\.field: /],
    [{ match: 'some', conditions: [] }, /^filter\.match: /],
  ])('refuses filter %#', async (filter, message) => {
    const res = await app.request('POST', '/segments', { token: app.token, body: { name: 'bad', filter } });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(message);
  });
});

describe('segments', () => {
  it('CRUD, static membership beside the filter, and contact segments', async () => {
    const created = await app.request('POST', '/segments', { token: app.token, body: { name: 'VIP' } });
    expect(created.body).toEqual({
      object: 'segment',
      id: expect.any(String),
      name: 'VIP',
      filter: { match: 'all', conditions: [] },
      created_at: expect.any(String),
    });
    const id = created.body.id;
    expect((await app.request('GET', `/segments/${id}`, { token: app.token })).body.contact_count).toBe(0);

    const added = await app.request('POST', `/contacts/${'bob@acme.test'}/segments/${id}`, {
      token: app.token,
      rawBody: '',
    });
    expect(added.body).toEqual({ object: 'contact_segment', id, contact_id: ids.bob, segment_id: id });
    await app.request('PATCH', `/segments/${id}`, {
      token: app.token,
      body: { name: 'VIPs', filter: all({ field: 'first_name', op: 'eq', value: 'Ann' }) },
    });
    const read = await app.request('GET', `/segments/${id}`, { token: app.token });
    expect(read.body).toMatchObject({ name: 'VIPs', contact_count: 2 });
    expect(
      (await app.request('GET', `/contacts/${ids.ann}/segments`, { token: app.token })).body.data.map(
        (s: { id: string }) => s.id,
      ),
    ).toContain(id);

    const removed = await app.request('DELETE', `/contacts/${ids.bob}/segments/${id}`, { token: app.token });
    expect(removed.body).toEqual({ object: 'contact_segment', id, contact_id: ids.bob, segment_id: id, deleted: true });
    expect((await app.request('GET', `/segments/${id}`, { token: app.token })).body.contact_count).toBe(1);
    expect((await app.request('DELETE', `/contacts/${ids.bob}/segments/${id}`, { token: app.token })).status).toBe(404);

    expect(
      (await app.request('GET', '/segments', { token: app.token })).body.data.some((s: { id: string }) => s.id === id),
    ).toBe(true);
    expect((await app.request('DELETE', `/segments/${id}`, { token: app.token })).body).toEqual({
      object: 'segment',
      id,
      deleted: true,
    });
    expect((await app.request('GET', `/segments/${id}`, { token: app.token })).status).toBe(404);
  });

  it('keeps a property count exact through contact writes, static members and other teams', async () => {
    const { token: own } = await app.createTeamWithKey();
    const { token: other } = await app.createTeamWithKey();
    for (const t of [own, other])
      await app.request('POST', '/contact-properties', {
        token: t,
        body: { key: 'tier', type: 'string', fallback_value: 'basic' },
      });
    await app.request('POST', '/contacts/batch', {
      token: other,
      body: [{ email: 'o@x.test', properties: { tier: 'gold' } }],
    });
    await app.request('POST', '/contacts/batch', {
      token: own,
      body: [
        { email: 'a@x.test', properties: { tier: 'Gold' } },
        { email: 'b@x.test', properties: { tier: 'gold' } },
        { email: 'c@x.test' },
        { email: 'd@x.test', properties: { tier: 'silver' } },
      ],
    });
    const id = (
      await app.request('POST', '/segments', {
        token: own,
        body: { name: 'gold', filter: all({ field: 'properties.tier', op: 'eq', value: 'gold' }) },
      })
    ).body.id;
    const count = async () => (await app.request('GET', `/segments/${id}`, { token: own })).body.contact_count;
    expect(await count()).toBe(2);

    await app.request('POST', `/contacts/c@x.test/segments/${id}`, { token: own, rawBody: '' });
    await app.request('POST', `/contacts/a@x.test/segments/${id}`, { token: own, rawBody: '' });
    expect(await count()).toBe(3);
    await app.request('PATCH', '/contacts/d@x.test', { token: own, body: { properties: { tier: 'GOLD' } } });
    expect(await count()).toBe(4);
    await app.request('PATCH', '/contacts/b@x.test', { token: own, body: { properties: { tier: 'silver' } } });
    await app.request('DELETE', '/contacts/a@x.test', { token: own });
    expect(await count()).toBe(2);
    // The fallback equals the value: every contact without a tier matches.
    await app.request('PATCH', `/segments/${id}`, {
      token: own,
      body: { filter: all({ field: 'properties.tier', op: 'eq', value: 'BASIC' }) },
    });
    expect(await count()).toBe(1);
    await app.request('PATCH', `/segments/${id}`, {
      token: own,
      body: { filter: all({ field: 'properties.tier', op: 'eq', value: 'gold' }) },
    });
    const property = (await app.request('GET', '/contact-properties', { token: own })).body.data.find(
      (p: { key: string }) => p.key === 'tier',
    );
    await app.request('DELETE', `/contact-properties/${property.id}`, { token: own });
    await app.request('POST', '/contact-properties', { token: own, body: { key: 'tier', type: 'string' } });
    expect(await count()).toBe(1);
  });

  it("hides another team's segments", async () => {
    const { token: other } = await app.createTeamWithKey();
    const id = (await app.request('POST', '/segments', { token: app.token, body: { name: 'mine' } })).body.id;
    expect((await app.request('GET', `/segments/${id}`, { token: other })).status).toBe(404);
    expect((await app.request('GET', `/audiences/${id}/contacts`, { token: other })).status).toBe(404);
  });
});

describe('audience aliases', () => {
  it('serve segments under /audiences, and audience contact calls reach the same contacts', async () => {
    const created = await app.request('POST', '/audiences', { token: app.token, body: { name: 'Newsletter' } });
    expect(created.status).toBe(201);
    expect(created.body.object).toBe('audience');
    const aid = created.body.id;
    expect((await app.request('GET', `/segments/${aid}`, { token: app.token })).body.object).toBe('segment');
    expect((await app.request('GET', `/audiences/${aid}`, { token: app.token })).body).toMatchObject({
      object: 'audience',
      name: 'Newsletter',
      contact_count: 0,
    });

    const contact = await app.request('POST', `/audiences/${aid}/contacts`, {
      token: app.token,
      body: { email: 'dee@acme.test', first_name: 'Dee' },
    });
    expect(contact.status).toBe(201);
    // A known address joins the audience too.
    await app.request('POST', `/audiences/${aid}/contacts`, { token: app.token, body: { email: 'ann@acme.test' } });
    const list = await app.request('GET', `/audiences/${aid}/contacts`, { token: app.token });
    expect(list.body.data.map((c: { email: string }) => c.email).sort()).toEqual(['ann@acme.test', 'dee@acme.test']);
    expect(
      (await app.request('GET', `/audiences/${aid}/contacts/dee@acme.test`, { token: app.token })).body.first_name,
    ).toBe('Dee');
    expect(
      (
        await app.request('PATCH', `/audiences/${aid}/contacts/dee@acme.test`, {
          token: app.token,
          body: { last_name: 'X' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await app.request('DELETE', `/audiences/${aid}/contacts/${contact.body.id}`, { token: app.token })).body.deleted,
    ).toBe(true);
    expect(
      (await app.request('GET', '/audiences', { token: app.token })).body.data.some(
        (a: { id: string }) => a.id === aid,
      ),
    ).toBe(true);
    expect((await app.request('DELETE', `/audiences/${aid}`, { token: app.token })).body).toEqual({
      object: 'audience',
      id: aid,
      deleted: true,
    });
  });
});

describe('contact properties', () => {
  it('CRUD, typed fallback, and deleting one removes its values', async () => {
    const created = await app.request('POST', '/contact-properties', {
      token: app.token,
      body: { key: 'city', type: 'string', fallback_value: 'Paris' },
    });
    expect(created.body).toEqual({
      object: 'contact_property',
      id: expect.any(String),
      key: 'city',
      type: 'string',
      fallback_value: 'Paris',
      created_at: expect.any(String),
    });
    const id = created.body.id;
    expect(
      (await app.request('POST', '/contact-properties', { token: app.token, body: { key: 'city', type: 'string' } }))
        .status,
    ).toBe(422);
    expect(
      (
        await app.request('POST', '/contact-properties', {
          token: app.token,
          body: { key: 'n', type: 'number', fallback_value: 'x' },
        })
      ).status,
    ).toBe(422);
    expect(
      (await app.request('POST', '/contact-properties', { token: app.token, body: { key: 'b', type: 'boolean' } }))
        .status,
    ).toBe(422);
    expect(
      (await app.request('PATCH', `/contact-properties/${id}`, { token: app.token, body: { fallback_value: 'Lyon' } }))
        .body,
    ).toEqual({ object: 'contact_property', id });
    expect((await app.request('GET', `/contact-properties/${id}`, { token: app.token })).body.fallback_value).toBe(
      'Lyon',
    );
    await app.request('PATCH', `/contacts/${ids.ann}`, { token: app.token, body: { properties: { city: 'Rome' } } });
    expect((await app.request('GET', `/contacts/${ids.ann}`, { token: app.token })).body.properties.city).toEqual({
      type: 'string',
      value: 'Rome',
    });
    expect((await app.request('DELETE', `/contact-properties/${id}`, { token: app.token })).body).toEqual({
      object: 'contact_property',
      id,
      deleted: true,
    });
    expect(
      (await app.request('GET', `/contacts/${ids.ann}`, { token: app.token })).body.properties.city,
    ).toBeUndefined();
    expect(
      (await app.request('PATCH', `/contacts/${ids.ann}`, { token: app.token, body: { properties: { city: 'Rome' } } }))
        .status,
    ).toBe(422);
  });
});

describe('topics', () => {
  it('CRUD with default_subscription and visibility', async () => {
    const created = await app.request('POST', '/topics', {
      token: app.token,
      body: { name: 'Product', default_subscription: 'opt_out', description: 'Updates', visibility: 'public' },
    });
    expect(created.body).toEqual({
      object: 'topic',
      id: expect.any(String),
      name: 'Product',
      description: 'Updates',
      default_subscription: 'opt_out',
      visibility: 'public',
      created_at: expect.any(String),
    });
    const id = created.body.id;
    expect((await app.request('POST', '/topics', { token: app.token, body: { name: 'x' } })).body.name).toBe(
      'missing_required_field',
    );
    expect(
      (await app.request('PATCH', `/topics/${id}`, { token: app.token, body: { id, name: 'Product news' } })).body,
    ).toEqual({
      object: 'topic',
      id,
    });
    expect((await app.request('GET', `/topics/${id}`, { token: app.token })).body.name).toBe('Product news');
    expect(
      (await app.request('GET', '/topics', { token: app.token })).body.data.some((t: { id: string }) => t.id === id),
    ).toBe(true);
    expect((await app.request('DELETE', `/topics/${id}`, { token: app.token })).body).toEqual({
      object: 'topic',
      id,
      deleted: true,
    });
    expect((await app.request('GET', `/topics/${id}`, { token: app.token })).status).toBe(404);
  });
});
