import { beforeAll, describe, expect, it } from 'vitest';
import { sqlQuery } from '../../../server/db/query.js';
import type { SegmentCondition, SegmentFilter } from '../../../server/entities/index.js';
import { loadAudienceCatalog } from '../../../server/services/contacts/audience-catalog.js';
import { foldContactTally } from '../../../server/services/contacts/fold-contact-tally.js';
import { segmentMembership } from '../../../server/services/segments/segment-filter.js';
import { useTestApp } from '../../support/test-app.js';

/**
 * Every operator's `contact_count` (counted through indexes and the contact tally where it can be)
 * against the plain scan it replaced: `count(*)` of the team's contacts in the segment's
 * membership predicate. The audience mixes missing names and properties, empty and
 * LIKE-special values, case and non-ASCII letters, another team's look-alikes, static members,
 * and contacts updated and deleted after they were written.
 */
const app = useTestApp();
const topics: Record<string, string> = {};
let segmentId: string;
let createdAt: string;

const contact = (email: string, rest: Record<string, unknown> = {}) => ({ email, ...rest });
const AUDIENCE = [
  contact('ann@acme.test', {
    first_name: 'Ann',
    last_name: 'Lee',
    properties: { plan: 'Pro', city: 'Paris', seats: 10 },
  }),
  contact('ANNA@Acme.test', { first_name: 'anna', properties: { plan: 'pro', seats: 2 } }),
  contact('zoe@example.org', { first_name: 'Zoë', last_name: 'STRAẞE', properties: { city: 'Zürich', seats: 0 } }),
  contact('emile@example.org', {
    first_name: 'ÉMILE',
    last_name: 'Straße',
    properties: { plan: 'free', city: 'İstanbul' },
  }),
  contact('cy%_@other.test', { unsubscribed: true, properties: { plan: '%_\\', city: '' } }),
  contact('dee@other.test', { first_name: '', last_name: '', properties: { plan: '', seats: 10.5 } }),
  contact('eve@acme.test', { first_name: 'Eve', properties: { plan: 'FREE', city: 'paris 🗼' } }),
  contact('fay@acme.test', { last_name: 'Lee', unsubscribed: true, properties: { city: 'Free town' } }),
  contact('gil@example.org', { first_name: 'Gil', properties: { plan: 'Enterprise', seats: -3 } }),
  contact('hal@example.org'),
  contact('ivy@example.org', { first_name: 'Ivy', properties: { plan: 'Free', city: 'Paris' } }),
  contact('jo@example.org', { first_name: 'Jo', last_name: 'Ann', properties: { plan: 'ann' } }),
  contact('kim@example.org', { first_name: 'Kim', properties: { plan: 'Say "hi"', city: 'tab\there' } }),
];

beforeAll(async () => {
  const properties = [
    { key: 'plan', type: 'string', fallback_value: 'Free' },
    { key: 'city', type: 'string' },
    { key: 'seats', type: 'number', fallback_value: 1 },
  ];
  const { token: other } = await app.createTeamWithKey();
  for (const token of [app.token, other])
    for (const body of properties) await app.request('POST', '/contact-properties', { token, body });
  for (const [name, defaultSubscription] of [
    ['news', 'opt_in'],
    ['offers', 'opt_out'],
  ] as const)
    topics[name] = (
      await app.request('POST', '/topics', {
        token: app.token,
        body: { name, default_subscription: defaultSubscription },
      })
    ).body.id;
  // Another team's look-alikes: none of them may be counted.
  await app.request('POST', '/contacts/batch', { token: other, body: AUDIENCE });
  const first = await app.request('POST', '/contacts/batch', {
    token: app.token,
    body: AUDIENCE.map((c, i) => ({
      ...c,
      topics: [
        ...(i % 3 === 0 ? [{ id: topics.news, subscription: 'opt_out' }] : []),
        ...(i % 4 === 1 ? [{ id: topics.offers, subscription: 'opt_in' }] : []),
        ...(i % 5 === 2 ? [{ id: topics.news, subscription: 'opt_in' }] : []),
      ],
    })),
  });
  expect(first.status).toBe(200);
  createdAt = (await app.request('GET', '/contacts/hal@example.org', { token: app.token })).body.created_at;
  await app.request('POST', '/contacts/batch', {
    token: app.token,
    body: [contact('late@acme.test', { first_name: 'Late', properties: { plan: 'pro' } }), contact('gone@acme.test')],
  });
  // Written, then changed: the tallies, the values and the indexes follow updates and deletes.
  await app.request('PATCH', '/contacts/gil@example.org', {
    token: app.token,
    body: { first_name: 'Gilles', properties: { plan: null, city: 'Lyon' } },
  });
  // A name gained and one lost; a number changed, so its old value is held by nobody.
  await app.request('PATCH', '/contacts/hal@example.org', { token: app.token, body: { first_name: 'Hal' } });
  await app.request('PATCH', '/contacts/fay@acme.test', { token: app.token, body: { last_name: null } });
  await app.request('PATCH', '/contacts/dee@other.test', { token: app.token, body: { properties: { seats: 11 } } });
  await app.request('DELETE', '/contacts/gone@acme.test', { token: app.token });
  // A static member matches some filters and not others.
  segmentId = (await app.request('POST', '/segments', { token: app.token, body: { name: 'compared' } })).body.id;
  for (const email of ['hal@example.org', 'emile@example.org'])
    await app.request('POST', `/contacts/${encodeURIComponent(email)}/segments/${segmentId}`, {
      token: app.token,
      rawBody: '',
    });
});

type Condition = SegmentCondition;

/** The count the API answers and the plain scan's, for one filter. */
async function counts(filter: SegmentFilter) {
  const patched = await app.request('PATCH', `/segments/${segmentId}`, { token: app.token, body: { filter } });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  const api = (await app.request('GET', `/segments/${segmentId}`, { token: app.token })).body.contact_count as number;
  const scan = await app.run(async () => {
    const em = app.deps.orm.em;
    const membership = segmentMembership({ id: segmentId, filter }, await loadAudienceCatalog(em, app.teamId));
    const [row] = await sqlQuery<{ n: string }>(
      em,
      `SELECT count(*) AS n FROM contact c WHERE c.team_id = ? AND ${membership.sql}`,
      [app.teamId, ...membership.bindings],
    );
    return Number(row!.n);
  });
  return { api, scan };
}

/** Every condition's count beside the scan's; the answer lists the ones that differ. */
async function mismatches(conditions: Condition[], match: SegmentFilter['match'] = 'all') {
  const wrong: string[] = [];
  for (const condition of conditions) {
    const { api, scan } = await counts({ match, conditions: [condition] });
    if (api !== scan) wrong.push(`${JSON.stringify(condition)}: ${api} counted, ${scan} scanned`);
  }
  return wrong;
}

const TEXT_VALUES = [
  'ann',
  'ANN',
  'Ann',
  '',
  'a',
  'an',
  'zoë',
  'ZOË',
  'straße',
  'STRASSE',
  'ẞ',
  'é',
  'émile',
  'i̇stanbul',
  'İstanbul',
  '🗼',
  '%',
  '_',
  '%_',
  '\\',
  'free',
  'Free',
  'fr',
  'ee',
  'pro',
  'paris',
  '@acme.test',
  'example',
  'lee',
  'nobody-has-this',
  '"hi',
  'y "h',
  'tab\th',
];
const TEXT_OPS = ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with'];

describe('segment counts equal the scan of the team’s contacts', () => {
  it.each(['email', 'first_name', 'last_name', 'properties.plan', 'properties.city'])(
    'text field %s, every operator',
    async (field) => {
      const conditions: Condition[] = [
        { field, op: 'exists' },
        { field, op: 'not_exists' },
      ];
      for (const op of TEXT_OPS) for (const value of TEXT_VALUES) conditions.push({ field, op, value });
      expect(await mismatches(conditions)).toEqual([]);
    },
  );

  it('numbers, booleans, times and topics', async () => {
    const conditions: Condition[] = [
      { field: 'properties.seats', op: 'exists' },
      { field: 'properties.seats', op: 'not_exists' },
    ];
    for (const op of ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'])
      for (const value of [-3, 0, 1, 2, 10, 10.5, '10.50', 99])
        conditions.push({ field: 'properties.seats', op, value });
    for (const op of ['eq', 'neq'])
      for (const value of [true, false, 'true', 'false']) conditions.push({ field: 'unsubscribed', op, value });
    for (const op of ['gt', 'gte', 'lt', 'lte'])
      for (const value of ['2000-01-01T00:00:00Z', createdAt, '2999-01-01T00:00:00Z'])
        conditions.push({ field: 'created_at', op, value });
    for (const id of Object.values(topics))
      for (const op of ['eq', 'neq'])
        for (const value of ['opt_in', 'opt_out']) conditions.push({ field: `topics.${id}`, op, value });
    expect(await mismatches(conditions)).toEqual([]);
  });

  it('several conditions, under all and any', async () => {
    const filters: SegmentFilter[] = [
      {
        match: 'any',
        conditions: [
          { field: 'properties.plan', op: 'eq', value: 'PRO' },
          { field: 'properties.plan', op: 'eq', value: 'ann' },
        ],
      },
      {
        match: 'any',
        conditions: [
          { field: 'properties.plan', op: 'eq', value: 'pro' },
          { field: 'properties.plan', op: 'eq', value: 'free' },
        ],
      },
      {
        match: 'all',
        conditions: [
          { field: 'email', op: 'ends_with', value: 'acme.test' },
          { field: 'first_name', op: 'neq', value: 'eve' },
        ],
      },
    ];
    for (const filter of filters) {
      const { api, scan } = await counts(filter);
      expect(api, JSON.stringify(filter)).toBe(scan);
    }
  });

  it('the same once maintenance has folded the tallies and dropped the values nobody holds', async () => {
    const query = <T extends object>(sql: string) => app.run(() => sqlQuery<T>(app.deps.orm.em, sql, [app.teamId]));
    const tally = () =>
      query<{ slot: number; contacts: string }>('SELECT slot, contacts FROM contact_tally WHERE team_id = ?');
    const fieldSlots = () => query<{ slot: number }>('SELECT slot FROM contact_field_tally WHERE team_id = ?');
    const values = () =>
      query<{ key: string; value: string }>(
        'SELECT key, value FROM contact_property_value WHERE team_id = ? ORDER BY key, value',
      );
    // Written by the API's connections: none in slot 0 yet.
    expect((await tally()).every((row) => row.slot !== 0)).toBe(true);
    expect((await fieldSlots()).every((row) => row.slot !== 0)).toBe(true);
    // The values gil and dee held before their edits, and gone@'s, are still there.
    expect(await values()).toContainEqual({ key: 'plan', value: 'enterprise' });
    expect(await values()).toContainEqual({ key: 'seats', value: '10.5' });
    expect(await app.run(() => foldContactTally(app.deps))).toBeGreaterThan(0);
    expect(await tally()).toEqual([{ slot: 0, contacts: String(AUDIENCE.length + 1) }]);
    expect((await fieldSlots()).every((row) => row.slot === 0)).toBe(true);
    // Exactly the values the team's contacts hold, lower-cased.
    const held = await query<{ key: string; value: string }>(
      `SELECT DISTINCT e.key, lower(e.value) AS value FROM contact c, jsonb_each_text(c.properties) e
        WHERE c.team_id = ? AND e.value IS NOT NULL ORDER BY 1, 2`,
    );
    expect(await values()).toEqual(held);
    expect(
      await mismatches([
        { field: 'first_name', op: 'neq', value: 'ann' },
        { field: 'last_name', op: 'exists' },
        { field: 'properties.city', op: 'not_exists' },
        { field: 'properties.plan', op: 'contains', value: 'r' },
        { field: 'properties.seats', op: 'gte', value: 10 },
      ]),
    ).toEqual([]);
  });
});
