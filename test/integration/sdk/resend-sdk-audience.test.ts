import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.js';

let app: TestApp;
let resend: Resend;

beforeAll(async () => {
  app = await startTestApp();
  const { token } = await app.createTeamWithKey();
  process.env.RESEND_BASE_URL = app.url;
  resend = new Resend(token);
});
afterAll(async () => {
  delete process.env.RESEND_BASE_URL;
  await app.close();
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
    expect(ok(await resend.contactProperties.get(created.id))).toMatchObject({ key: 'company', type: 'string', fallbackValue: 'n/a' });
    ok(await resend.contactProperties.update({ id: created.id, fallbackValue: 'none' }));
    expect(ok(await resend.contactProperties.get(created.id)).fallbackValue).toBe('none');
    expect(ok(await resend.contactProperties.remove(created.id))).toMatchObject({ id: created.id, deleted: true });
  });

  it('topics: create, list, get, update, remove', async () => {
    const { id } = ok(await resend.topics.create({ name: 'Launches', defaultSubscription: 'opt_in', description: 'New things' }));
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
    const { id } = ok(await resend.contacts.create({ email, firstName: 'Sam', properties: { tier: 2 }, segments: [{ id: segment.id }], topics: [{ id: topic.id, subscription: 'opt_in' }] }));

    expect(ok(await resend.contacts.get(id))).toMatchObject({ object: 'contact', email: 'sam+sdk@example.com', first_name: 'Sam', properties: { tier: { type: 'number', value: 2 } } });
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

    expect(ok(await resend.contacts.topics.list({ id })).data).toEqual([expect.objectContaining({ id: topic.id, subscription: 'opt_in' })]);
    ok(await resend.contacts.topics.update({ email, topics: [{ id: topic.id, subscription: 'opt_out' }] }));
    expect(ok(await resend.contacts.topics.list({ email })).data[0]!.subscription).toBe('opt_out');

    expect(ok(await resend.contacts.remove({ email }))).toMatchObject({ object: 'contact', contact: id, deleted: true });
    expect((await resend.contacts.get(id)).error).toMatchObject({ name: 'not_found' });
  });

  it('the older audience-scoped contact calls work unchanged', async () => {
    const audience = ok(await resend.audiences.create({ name: 'Legacy list' }));
    const { id } = ok(await resend.contacts.create({ audienceId: audience.id, email: 'old@example.com', firstName: 'Old' }));
    expect(ok(await resend.contacts.list({ audienceId: audience.id })).data.map((c) => c.id)).toEqual([id]);
    expect(ok(await resend.contacts.get({ audienceId: audience.id, email: 'old@example.com' })).first_name).toBe('Old');
    ok(await resend.contacts.update({ audienceId: audience.id, id, firstName: 'Older' }));
    expect(ok(await resend.contacts.get(id)).first_name).toBe('Older');
    expect(ok(await resend.contacts.remove({ audienceId: audience.id, id })).deleted).toBe(true);
  });
});
