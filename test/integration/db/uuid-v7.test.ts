import { describe, expect, it } from 'vitest';
import { isUuid } from '../../../server/db/ids.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const sql = <T>(text: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(text, params);
const millisOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('postlane_uuid_v7()', () => {
  it('makes version 7 UUIDs with the database clock in front, distinct and in time order across milliseconds', async () => {
    const rows = await sql<{ id: string; at: string }>(
      `SELECT postlane_uuid_v7()::text AS id, floor(extract(epoch FROM clock_timestamp()) * 1000)::text AS at FROM generate_series(1, 2000)`,
    );
    for (const { id, at } of rows) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]);
      // Made just before the clock was read for its row.
      expect(Number(at) - millisOf(id)).toBeGreaterThanOrEqual(0);
      expect(Number(at) - millisOf(id)).toBeLessThan(1_000);
    }
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    const millis = rows.map((r) => millisOf(r.id));
    expect([...millis].sort((a, b) => a - b)).toEqual(millis);
  });

  it('gives a sent email and its recipients time-ordered ids', async () => {
    const { token } = await app.createTeamWithKey();
    const res = await app.request('POST', '/emails', {
      token,
      body: { from: 'a@acme.test', to: ['b@example.com', 'c@example.com'], subject: 'v7', text: 'ids' },
    });
    expect(res.status).toBe(200);
    const recipients = await sql<{ id: string }>('SELECT id::text FROM email_recipient WHERE email_id = ?', [
      res.body.id,
    ]);
    for (const id of [res.body.id as string, ...recipients.map((r) => r.id)]) expect(id[14]).toBe('7');
  });
});
