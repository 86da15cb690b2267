import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { queryDatabase } from '../../support/db.js';
import { FAST_RECOVERY_ENV, spawnPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

const CONTACTS = 600;

/** Short leases and locks so recovery after a kill takes seconds; small batches so the walk takes many transactions. */
const workerEnv = () => ({
  DATABASE_URL: app.databaseUrl,
  ...FAST_RECOVERY_ENV,
  POSTLANE_BROADCAST_BATCH_SIZE: '50',
});

const query = <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) =>
  queryDatabase<T>(app.databaseUrl, sql, params);

// The API enqueues into Agenda for real but runs no jobs: only the child worker processes do.
const app = useTestApp({ jobs: 'agenda' });

describe('a broadcast across worker crashes', () => {
  it('gives every contact exactly one email when the worker is killed mid-broadcast and another takes over', async () => {
    const segment = await app.request('POST', '/segments', { token: app.token, body: { name: 'Crash' } });
    await query(
      `WITH c AS (
         INSERT INTO contact (id, created_at, updated_at, team_id, email, unsubscribed, properties)
         SELECT gen_random_uuid(), now(), now(), $1, 'crash' || g || '@example.com', false, '{}' FROM generate_series(1, $2) g RETURNING id)
       INSERT INTO segment_member (segment_id, contact_id, created_at) SELECT $3, id, now() FROM c`,
      [app.teamId, CONTACTS, segment.body.id],
    );
    const created = await app.request('POST', '/broadcasts', {
      token: app.token,
      body: {
        segment_id: segment.body.id,
        from: 'news@acme.test',
        subject: 'Crash',
        text: 'Hi {{{EMAIL}}}',
        send: true,
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const walked = async () =>
      (await query<{ expanded_count: number }>('SELECT expanded_count FROM broadcast WHERE id = $1', [id]))[0]!
        .expanded_count;

    // Each batch pauses inside its transaction: the kill lands mid-walk, most likely mid-batch.
    const doomed = spawnPostlane(['serve', '--role', 'worker'], { ...workerEnv(), POSTLANE_TEST_SEND_DELAY_MS: '400' });
    await until(async () => (await walked()) >= 150);
    doomed.child.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const atKill = await walked();
    expect(atKill).toBeLessThan(CONTACTS);
    // What committed is exactly what the cursor says: no batch half-written.
    const [written] = await query<{ n: number }>('SELECT count(*)::int AS n FROM email WHERE broadcast_id = $1', [id]);
    expect(written!.n).toBe(atKill);

    // Slowed too, so that its runs outlast the job lock lifetime: a live run must keep its lock, not
    // be cancelled by Agenda into a retry backoff while its handler goes on.
    const survivor = spawnPostlane(['serve', '--role', 'worker'], {
      ...workerEnv(),
      POSTLANE_TEST_SEND_DELAY_MS: '600',
    });
    try {
      await until(
        async () =>
          (await query<{ status: string }>('SELECT status FROM broadcast WHERE id = $1', [id]))[0]!.status === 'sent',
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; the survivor's log:\n${survivor.output().slice(-4000)}`);
      });
      expect(survivor.output()).not.toContain('canceled, execution took more than');
      const perContact = await query<{ address: string; n: number }>(
        `SELECT c.email AS address, count(e.id)::int AS n FROM contact c LEFT JOIN email e ON e.broadcast_id = $1 AND e."to"[1] = c.email
          WHERE c.team_id = $2 GROUP BY 1`,
        [id, app.teamId],
      );
      expect(perContact).toHaveLength(CONTACTS);
      expect(perContact.filter((row) => row.n !== 1)).toEqual([]);
      const statuses = await query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM email WHERE broadcast_id = $1 GROUP BY 1',
        [id],
      );
      expect(statuses).toEqual([{ status: 'sent', n: CONTACTS }]);
      expect((await app.request('GET', `/broadcasts/${id}`, { token: app.token })).body).toMatchObject({
        status: 'sent',
        sent_count: CONTACTS,
      });
    } finally {
      survivor.child.kill('SIGTERM');
      await survivor.exited;
    }
  }, 120_000);
});
