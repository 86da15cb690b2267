import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

const app = useTestApp();

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const sql = async <T>(query: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);

/** A team of its own per test, with a `plan` property, a segment and a topic. */
async function team() {
  const { token, teamId } = await app.createTeamWithKey();
  await app.request('POST', '/contact-properties', { token, body: { key: 'plan', type: 'string' } });
  const segment = (await app.request('POST', '/segments', { token, body: { name: 'S' } })).body;
  const topic = (await app.request('POST', '/topics', { token, body: { name: 'T', default_subscription: 'opt_out' } }))
    .body;
  const batch = (body: unknown, onConflict?: string, headers: Record<string, string> = {}) =>
    app.request('POST', `/contacts/batch${onConflict ? `?on_conflict=${onConflict}` : ''}`, { token, body, headers });
  const get = async (email: string) => (await app.request('GET', `/contacts/${email}`, { token })).body;
  const events = async (type: string) =>
    Number(
      (await sql<{ n: string }>('SELECT count(*) AS n FROM event WHERE team_id = ? AND type = ?', [teamId, type]))[0]!
        .n,
    );
  return { token, teamId, segment, topic, batch, get, events };
}

describe('POST /contacts/batch', () => {
  it('creates every item and reports each by index', async () => {
    const t = await team();
    const [a, b] = [unique('a'), unique('b')];
    const res = await t.batch([
      { email: a, segments: [{ id: t.segment.id }], topics: [{ id: t.topic.id, subscription: 'opt_in' }] },
      { email: b, properties: { plan: 'pro' } },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        { object: 'contact', index: 0, id: expect.any(String), status: 'created' },
        { object: 'contact', index: 1, id: expect.any(String), status: 'created' },
      ],
      counts: { created: 2, updated: 0, skipped: 0, failed: 0 },
      errors: [],
    });
    expect((await app.request('GET', `/segments/${t.segment.id}`, { token: t.token })).body.contact_count).toBe(1);
    expect(await t.events('contact.created')).toBe(2);
    // A new contact's choices are written with it, and announce nothing: it had no value to flip from.
    expect((await app.request('GET', `/contacts/${a}/topics`, { token: t.token })).body.data[0]).toMatchObject({
      id: t.topic.id,
      subscription: 'opt_in',
      explicit: true,
    });
    expect((await app.request('GET', `/contacts/${b}/topics`, { token: t.token })).body.data[0]).toMatchObject({
      id: t.topic.id,
      subscription: 'opt_out',
      explicit: false,
    });
    expect(await t.events('contact.topic_opt_in')).toBe(0);
    expect((await t.get(b)).properties).toMatchObject({ plan: { value: 'pro' } });
  });

  it('on_conflict=error, permissive: fails items whose address exists, and a repeat inside the batch', async () => {
    const t = await team();
    const known = unique('known');
    await t.batch([{ email: known }]);
    const fresh = unique('fresh');
    const res = await t.batch(
      [{ email: known.toUpperCase() }, { email: fresh }, { email: fresh, first_name: 'Later' }],
      undefined,
      { 'x-batch-validation': 'permissive' },
    );
    expect(res.body.counts).toEqual({ created: 1, updated: 0, skipped: 0, failed: 2 });
    expect(res.body.errors).toEqual([
      { index: 0, message: 'email: a contact with this address already exists' },
      { index: 2, message: 'email: repeats contacts.1 in this request' },
    ]);
    expect((await t.get(fresh)).first_name).toBeNull();
  });

  it('on_conflict=skip leaves existing contacts untouched and keeps the first of a repeat', async () => {
    const t = await team();
    const known = unique('known');
    const id = (await t.batch([{ email: known, first_name: 'Orig' }])).body.data[0].id;
    const fresh = unique('fresh');
    const res = await t.batch(
      [
        { email: known, first_name: 'New', segments: [t.segment.id] },
        { email: fresh, first_name: 'First' },
        { email: fresh, first_name: 'Second' },
      ],
      'skip',
    );
    expect(res.body.data.map((d: { status: string }) => d.status)).toEqual(['skipped', 'created', 'skipped']);
    expect(res.body.data[0].id).toBe(id);
    expect(res.body.data[2].id).toBe(res.body.data[1].id);
    expect((await t.get(known)).first_name).toBe('Orig');
    expect((await t.get(fresh)).first_name).toBe('First');
    expect((await app.request('GET', `/segments/${t.segment.id}`, { token: t.token })).body.contact_count).toBe(0);
  });

  it('on_conflict=upsert merges: names only when given, properties merged, segments added, topics upserted', async () => {
    const t = await team();
    await app.request('POST', '/contact-properties', { token: t.token, body: { key: 'seats', type: 'number' } });
    const known = unique('known');
    await t.batch([{ email: known, first_name: 'Ann', last_name: 'Lee', properties: { plan: 'free', seats: 1 } }]);
    const res = await t.batch(
      [
        {
          email: known,
          last_name: 'Kim',
          properties: { seats: 5 },
          segments: [{ id: t.segment.id }],
          topics: [{ id: t.topic.id, subscription: 'opt_in' }],
        },
      ],
      'upsert',
    );
    expect(res.body.counts).toEqual({ created: 0, updated: 1, skipped: 0, failed: 0 });
    const contact = await t.get(known);
    expect(contact).toMatchObject({
      first_name: 'Ann',
      last_name: 'Kim',
      properties: { plan: { type: 'string', value: 'free' }, seats: { type: 'number', value: 5 } },
    });
    expect(
      (await app.request('GET', `/contacts/${known}/segments`, { token: t.token })).body.data.map(
        (s: { id: string }) => s.id,
      ),
    ).toEqual([t.segment.id]);
    expect((await app.request('GET', `/contacts/${known}/topics`, { token: t.token })).body.data[0]).toMatchObject({
      subscription: 'opt_in',
      explicit: true,
    });
    expect(await t.events('contact.updated')).toBe(1);
    expect(await t.events('contact.topic_opt_in')).toBe(1);
  });

  it('upsert collapses a repeated address into one write: later scalars win, associations are unioned', async () => {
    const t = await team();
    const other = (await app.request('POST', '/segments', { token: t.token, body: { name: 'Other' } })).body;
    const email = unique('twice');
    const res = await t.batch(
      [
        { email, first_name: 'One', properties: { plan: 'a' }, segments: [t.segment.id] },
        { email: email.toUpperCase(), first_name: 'Two', segments: [other.id] },
      ],
      'upsert',
    );
    expect(res.body.counts).toEqual({ created: 2, updated: 0, skipped: 0, failed: 0 });
    expect(res.body.data[0].id).toBe(res.body.data[1].id);
    expect(await t.get(email)).toMatchObject({ first_name: 'Two', properties: { plan: { value: 'a' } } });
    expect((await app.request('GET', `/contacts/${email}/segments`, { token: t.token })).body.data).toHaveLength(2);
    expect(await t.events('contact.created')).toBe(1);
  });

  it('unsubscribed: true opts out; unsubscribed: false never re-subscribes in bulk', async () => {
    const t = await team();
    const email = unique('unsub');
    await t.batch([{ email }]);
    await t.batch([{ email, unsubscribed: true }], 'upsert');
    expect((await t.get(email)).unsubscribed).toBe(true);
    expect(await t.events('contact.unsubscribed')).toBe(1);
    await t.batch([{ email, unsubscribed: false }], 'upsert');
    expect((await t.get(email)).unsubscribed).toBe(true);
    expect(await t.events('contact.resubscribed')).toBe(0);
  });

  it('strict rejects the whole batch naming the item, and writes nothing', async () => {
    const t = await team();
    const ok = unique('ok');
    const bad = await t.batch([{ email: ok }, { email: 'not-an-address' }]);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/^contacts\.1: email: /);
    const unknownProp = await t.batch([{ email: ok }, { email: unique('x'), properties: { nope: 1 } }]);
    expect(unknownProp.status).toBe(422);
    expect(unknownProp.body.message).toMatch(/^contacts\.1: properties\.nope: /);
    const missing = await t.batch([{ first_name: 'x' }]);
    expect(missing.body).toMatchObject({
      statusCode: 422,
      name: 'missing_required_field',
      message: 'contacts.0: Missing `email` field.',
    });
    expect((await app.request('GET', `/contacts/${ok}`, { token: t.token })).status).toBe(404);
  });

  it('strict names the lowest failing index, whatever made it fail', async () => {
    const t = await team();
    const known = unique('known');
    await t.batch([{ email: known }]);
    const res = await t.batch([{ email: unique('ok') }, { email: known }, { email: 'not-an-address' }]);
    expect(res.body).toEqual({
      statusCode: 409,
      name: 'conflict',
      message: 'contacts.1: email: a contact with this address already exists',
    });
    const invalidFirst = await t.batch([{ email: 'not-an-address' }, { email: known }]);
    expect(invalidFirst.body).toMatchObject({
      statusCode: 422,
      message: expect.stringMatching(/^contacts\.0: email: /),
    });
    expect(await t.events('contact.created')).toBe(1);
  });

  it('two strict batches racing for one new address: one is written, the other refused whole', async () => {
    const t = await team();
    const shared = unique('shared');
    const [a, b] = [unique('a'), unique('b')];
    const results = await Promise.all([
      t.batch([{ email: a }, { email: shared }]),
      t.batch([{ email: b }, { email: shared }]),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const refused = results.find((r) => r.status === 409)!;
    expect(refused.body).toEqual({
      statusCode: 409,
      name: 'conflict',
      message: 'contacts.1: email: a contact with this address already exists',
    });
    const loser = refused === results[0] ? a : b;
    expect((await app.request('GET', `/contacts/${loser}`, { token: t.token })).status).toBe(404);
    expect(await t.events('contact.created')).toBe(2);
  });

  it('an address taken by another writer mid-call (unique violation) is judged as existing, with nothing written', async () => {
    const t = await team();
    const taken = unique('taken');
    const before = unique('before');
    // Another writer inserts the address without the team lock and holds its transaction open:
    // the batch finds the address free, then waits on the unique index until that commits.
    const other = await app.deps.orm.em.fork().getConnection().getKnex().transaction();
    await other.raw(
      "INSERT INTO contact (id, team_id, email, unsubscribed, properties, created_at, updated_at) VALUES (gen_random_uuid(), ?, ?, false, '{}', now(), now())",
      [t.teamId, taken],
    );
    const pending = t.batch([{ email: before }, { email: taken }]);
    await until(async () => {
      const [waiting] = await sql<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO contact %' AND datname = current_database()",
      );
      return Number(waiting!.n) > 0;
    }, 5_000);
    await other.commit();
    const res = await pending;
    expect(res.body).toEqual({
      statusCode: 409,
      name: 'conflict',
      message: 'contacts.1: email: a contact with this address already exists',
    });
    expect((await app.request('GET', `/contacts/${before}`, { token: t.token })).status).toBe(404);
    expect(await t.events('contact.created')).toBe(0);
  });

  it('permissive writes the valid subset and lists the invalid items', async () => {
    const t = await team();
    const res = await t.batch(
      [{ email: unique('ok') }, { email: 'bad' }, { email: unique('y'), properties: { plan: 3 } }],
      undefined,
      { 'x-batch-validation': 'permissive' },
    );
    expect(res.status).toBe(200);
    expect(res.body.counts).toEqual({ created: 1, updated: 0, skipped: 0, failed: 2 });
    expect(res.body.errors.map((e: { index: number }) => e.index)).toEqual([1, 2]);
    expect(res.body.errors[1].message).toBe('properties.plan: must be a string');
  });

  it('takes 1 to 1000 items', async () => {
    const t = await team();
    expect((await t.batch([])).status).toBe(422);
    expect((await t.batch(Array.from({ length: 1001 }, (_, i) => ({ email: `n${i}@example.com` })))).body.message).toBe(
      'must hold at most 1000 contacts',
    );
    expect((await t.batch([{ email: unique('q') }], 'merge')).status).toBe(422);
  });
});

describe('POST /contacts/batch/get and /contacts/batch/remove', () => {
  it('returns contacts in request order and the missing entries with their index', async () => {
    const t = await team();
    const [a, b] = [unique('a'), unique('b')];
    const ids = (await t.batch([{ email: a, properties: { plan: 'x' } }, { email: b }])).body.data.map(
      (d: { id: string }) => d.id,
    );
    const res = await app.request('POST', '/contacts/batch/get', {
      token: t.token,
      body: {
        contacts: [
          { email: b.toUpperCase() },
          { id: '00000000-0000-4000-8000-000000000000' },
          { id: ids[0] },
          { email: 'nobody@example.com' },
        ],
        include: ['properties'],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([ids[1], ids[0]]);
    expect(res.body.data[1].properties).toEqual({ plan: { type: 'string', value: 'x' } });
    expect(res.body.missing).toEqual([
      { index: 1, id: '00000000-0000-4000-8000-000000000000', email: null },
      { index: 3, id: null, email: 'nobody@example.com' },
    ]);
  });

  it("deletes by ids and emails, skipping unknown and other teams' contacts, listing only deleted rows", async () => {
    const t = await team();
    const other = await team();
    const [a, b] = [unique('a'), unique('b')];
    const ids = (await t.batch([{ email: a }, { email: b }])).body.data.map((d: { id: string }) => d.id);
    const foreign = (await other.batch([{ email: unique('f') }])).body.data[0].id;
    const res = await app.request('POST', '/contacts/batch/remove', {
      token: t.token,
      body: {
        ids: [ids[0], foreign, '00000000-0000-4000-8000-000000000000'],
        emails: [b.toUpperCase(), 'x@example.com'],
        erase: true,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((d: { contact: string }) => d.contact).sort()).toEqual([...ids].sort());
    expect(res.body.data[0]).toEqual({ object: 'contact', contact: expect.any(String), deleted: true });
    expect(await t.events('contact.deleted')).toBe(2);
    expect((await app.request('GET', `/contacts/${foreign}`, { token: other.token })).status).toBe(200);
    expect((await sql('SELECT email FROM erasure_request WHERE team_id = ? ORDER BY email', [t.teamId])).length).toBe(
      2,
    );
  });
});
