import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

let resend: Resend;

const app = useTestApp();
beforeAll(async () => {
  process.env.RESEND_BASE_URL = app.url;
  resend = new Resend(app.token);
});
afterAll(async () => {
  delete process.env.RESEND_BASE_URL;
});

/** The SDK answers `{data, error}`; a test reads data and fails loudly on an error. */
const ok = <T>(result: { data: T | null; error: unknown }): T => {
  expect(result.error).toBeNull();
  return result.data!;
};

describe('the official resend SDK: audience methods', () => {
  it('contactProperties: create, list, get, update, remove', async () => {
    const created = ok(await resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'n/a' }));
    expect(created).toMatchObject({ object: 'contact_property', id: expect.any(String) });
    const listed = ok(await resend.contactProperties.list());
    expect(listed.data.map((p) => p.key)).toContain('company');
    expect(ok(await resend.contactProperties.get(created.id))).toMatchObject({
      key: 'company',
      type: 'string',
      fallbackValue: 'n/a',
    });
    ok(await resend.contactProperties.update({ id: created.id, fallbackValue: 'none' }));
    expect(ok(await resend.contactProperties.get(created.id)).fallbackValue).toBe('none');
    expect(ok(await resend.contactProperties.remove(created.id))).toMatchObject({ id: created.id, deleted: true });
  });

  it('topics: create, list, get, update, remove', async () => {
    const { id } = ok(
      await resend.topics.create({ name: 'Launches', defaultSubscription: 'opt_in', description: 'New things' }),
    );
    expect(ok(await resend.topics.list()).data.map((t) => t.id)).toContain(id);
    expect(ok(await resend.topics.get(id))).toMatchObject({ name: 'Launches', default_subscription: 'opt_in' });
    ok(await resend.topics.update({ id, name: 'Product launches' }));
    expect(ok(await resend.topics.get(id)).name).toBe('Product launches');
    expect(ok(await resend.topics.remove(id))).toMatchObject({ id, deleted: true });
  });

  it('segments and audiences: create, list, get, update, remove', async () => {
    const segment = ok(await resend.segments.create({ name: 'Customers' }));
    expect(segment).toMatchObject({ object: 'segment', name: 'Customers' });
    expect(ok(await resend.segments.list()).data.map((s) => s.id)).toContain(segment.id);
    expect(ok(await resend.segments.get(segment.id))).toMatchObject({ name: 'Customers', contact_count: 0 });
    ok(await resend.segments.update(segment.id, { name: 'Paying customers' }));
    expect(ok(await resend.audiences.get(segment.id)).name).toBe('Paying customers');
    expect(ok(await resend.audiences.remove(segment.id))).toMatchObject({ id: segment.id, deleted: true });
  });

  it('contacts: create with segments and topics, get by id and email, list, update, segments, topics, remove', async () => {
    await resend.contactProperties.create({ key: 'tier', type: 'number' });
    const segment = ok(await resend.segments.create({ name: 'Beta' }));
    const topic = ok(await resend.topics.create({ name: 'Tips', defaultSubscription: 'opt_out' }));
    const email = 'Sam+sdk@Example.com';
    const { id } = ok(
      await resend.contacts.create({
        email,
        firstName: 'Sam',
        properties: { tier: 2 },
        segments: [{ id: segment.id }],
        topics: [{ id: topic.id, subscription: 'opt_in' }],
      }),
    );

    expect(ok(await resend.contacts.get(id))).toMatchObject({
      object: 'contact',
      email: 'sam+sdk@example.com',
      first_name: 'Sam',
      properties: { tier: { type: 'number', value: 2 } },
    });
    expect(ok(await resend.contacts.get({ email })).id).toBe(id);
    expect(ok(await resend.contacts.list()).data.map((c) => c.id)).toContain(id);
    expect(ok(await resend.contacts.list({ segmentId: segment.id })).data.map((c) => c.id)).toEqual([id]);

    ok(await resend.contacts.update({ email, lastName: 'Lee', unsubscribed: true }));
    expect(ok(await resend.contacts.get(id))).toMatchObject({ last_name: 'Lee', unsubscribed: true });

    expect(ok(await resend.contacts.segments.list({ contactId: id })).data.map((s) => s.id)).toEqual([segment.id]);
    ok(await resend.contacts.segments.remove({ email, segmentId: segment.id }));
    expect(ok(await resend.contacts.segments.list({ email })).data).toEqual([]);
    ok(await resend.contacts.segments.add({ contactId: id, segmentId: segment.id }));
    // contact_count is Postlane's addition: the SDK passes it through without typing it.
    expect(ok(await resend.segments.get(segment.id))).toMatchObject({ contact_count: 1 });

    expect(ok(await resend.contacts.topics.list({ id })).data).toEqual([
      expect.objectContaining({ id: topic.id, subscription: 'opt_in' }),
    ]);
    ok(await resend.contacts.topics.update({ email, topics: [{ id: topic.id, subscription: 'opt_out' }] }));
    expect(ok(await resend.contacts.topics.list({ email })).data[0]!.subscription).toBe('opt_out');

    expect(ok(await resend.contacts.remove({ email }))).toMatchObject({
      object: 'contact',
      contact: id,
      deleted: true,
    });
    expect((await resend.contacts.get(id)).error).toMatchObject({ name: 'not_found' });
  });

  it("emails.send takes the wire's topic_id as topicId; a snake_case topic_id is dropped by the SDK before it is sent", async () => {
    const topic = ok(await resend.topics.create({ name: 'Digest', defaultSubscription: 'opt_in' }));
    const mail = { from: 'a@acme.test', to: 'reader@example.com', subject: 'Digest', text: 'hi' };
    const camel = ok(await resend.emails.send({ ...mail, topicId: topic.id }));
    expect(ok(await resend.emails.get(camel.id))).toMatchObject({ topic_id: topic.id });
    const snake = ok(
      await resend.emails.send({ ...mail, topic_id: topic.id } as Parameters<typeof resend.emails.send>[0]),
    );
    expect(ok(await resend.emails.get(snake.id))).not.toHaveProperty('topic_id');
  });

  it('the older audience-scoped contact calls work unchanged', async () => {
    const audience = ok(await resend.audiences.create({ name: 'Legacy list' }));
    const { id } = ok(
      await resend.contacts.create({ audienceId: audience.id, email: 'old@example.com', firstName: 'Old' }),
    );
    expect(ok(await resend.contacts.list({ audienceId: audience.id })).data.map((c) => c.id)).toEqual([id]);
    expect(ok(await resend.contacts.get({ audienceId: audience.id, email: 'old@example.com' })).first_name).toBe('Old');
    ok(await resend.contacts.update({ audienceId: audience.id, id, firstName: 'Older' }));
    expect(ok(await resend.contacts.get(id)).first_name).toBe('Older');
    expect(ok(await resend.contacts.remove({ audienceId: audience.id, id })).deleted).toBe(true);
  });
});

/**
 * The SDK has no method for POST /contacts/batch; its generic `post` sends it with the SDK's own
 * headers and error handling, as an SDK user would.
 */
describe('the official resend SDK: POST /contacts/batch under on_conflict=error', () => {
  const sql = async <T>(query: string, params: unknown[] = []) =>
    app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);
  const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;

  /** A team of its own with one existing contact, a segment and a topic; `written()` is what the team holds. */
  async function team(contactLimit?: number) {
    const { token, teamId } = await app.createTeamWithKey();
    if (contactLimit !== undefined) await sql('UPDATE team SET contact_limit = ? WHERE id = ?', [contactLimit, teamId]);
    const client = new Resend(token);
    const known = unique('known');
    ok(await client.contacts.create({ email: known }));
    const segment = ok(await client.segments.create({ name: 'S' }));
    const topic = ok(await client.topics.create({ name: 'T', defaultSubscription: 'opt_out' }));
    const batch = (items: object[], validation: 'strict' | 'permissive') =>
      client.post<{ counts: object; errors: { index: number; message: string }[] }>(
        '/contacts/batch?on_conflict=error',
        items,
        { headers: { 'x-batch-validation': validation } },
      );
    /** A new item that would join the segment and make a topic choice. */
    const item = (email: string) => ({
      email,
      segments: [{ id: segment.id }],
      topics: [{ id: topic.id, subscription: 'opt_in' }],
    });
    const written = async () => {
      const [row] = await sql<{ contacts: string; members: string; choices: string; events: string }>(
        `SELECT (SELECT count(*) FROM contact WHERE team_id = ?) AS contacts,
                (SELECT count(*) FROM segment_member WHERE segment_id = ?) AS members,
                (SELECT count(*) FROM contact_topic WHERE topic_id = ?) AS choices,
                (SELECT count(*) FROM event WHERE team_id = ? AND type LIKE 'contact.%') AS events`,
        [teamId, segment.id, topic.id, teamId],
      );
      return {
        contacts: Number(row!.contacts),
        members: Number(row!.members),
        choices: Number(row!.choices),
        events: Number(row!.events),
      };
    };
    return { known, batch, item, written, before: await written() };
  }

  it('strict: an existing address refuses the whole batch with 409 naming it, and writes nothing', async () => {
    const t = await team();
    const { data, error } = await t.batch([t.item(unique('fresh')), { email: t.known.toUpperCase() }], 'strict');
    expect(data).toBeNull();
    expect(error).toEqual({
      statusCode: 409,
      name: 'conflict',
      message: 'contacts.1: email: a contact with this address already exists',
    });
    expect(await t.written()).toEqual(t.before);
  });

  it('strict: an address repeated inside the batch refuses it with 409 naming the later item, and writes nothing', async () => {
    const t = await team();
    const fresh = unique('fresh');
    const { error } = await t.batch(
      [t.item(fresh), t.item(unique('other')), { email: fresh, first_name: 'Later' }],
      'strict',
    );
    expect(error).toEqual({
      statusCode: 409,
      name: 'conflict',
      message: 'contacts.2: email: repeats contacts.0 in this request',
    });
    expect(await t.written()).toEqual(t.before);
  });

  it('permissive: an existing address fails that item only; the rest is written', async () => {
    const t = await team();
    const result = ok(await t.batch([t.item(unique('fresh')), { email: t.known }], 'permissive'));
    expect(result.counts).toEqual({ created: 1, updated: 0, skipped: 0, failed: 1 });
    expect(result.errors).toEqual([{ index: 1, message: 'email: a contact with this address already exists' }]);
    expect(await t.written()).toEqual({
      contacts: t.before.contacts + 1,
      members: 1,
      choices: 1,
      events: t.before.events + 1,
    });
  });

  it('permissive: a repeated address fails the later item only; the first is written', async () => {
    const t = await team();
    const fresh = unique('fresh');
    const result = ok(await t.batch([t.item(fresh), { email: fresh, first_name: 'Later' }], 'permissive'));
    expect(result.counts).toEqual({ created: 1, updated: 0, skipped: 0, failed: 1 });
    expect(result.errors).toEqual([{ index: 1, message: 'email: repeats contacts.0 in this request' }]);
    expect(await t.written()).toEqual({
      contacts: t.before.contacts + 1,
      members: 1,
      choices: 1,
      events: t.before.events + 1,
    });
  });

  it('strict: a new contact past the cap refuses the whole batch with 403 plan_limit_reached naming it, and writes nothing', async () => {
    const t = await team(2);
    const { error } = await t.batch([t.item(unique('a')), t.item(unique('b'))], 'strict');
    expect(error).toEqual({
      statusCode: 403,
      name: 'plan_limit_reached',
      message:
        'contacts.1: This team has reached its limit of 2 contacts. Delete contacts or raise the limit to add more.',
    });
    expect(await t.written()).toEqual(t.before);
  });

  it('permissive: a new contact past the cap fails that item only', async () => {
    const t = await team(2);
    const result = ok(await t.batch([t.item(unique('a')), t.item(unique('b'))], 'permissive'));
    expect(result.counts).toEqual({ created: 1, updated: 0, skipped: 0, failed: 1 });
    expect(result.errors).toEqual([
      {
        index: 1,
        message: 'This team has reached its limit of 2 contacts. Delete contacts or raise the limit to add more.',
      },
    ]);
    expect(await t.written()).toEqual({ contacts: 2, members: 1, choices: 1, events: t.before.events + 1 });
  });
});
