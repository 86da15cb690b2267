import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { queryDatabase } from '../../support/db.js';
import { FAST_RECOVERY_ENV, spawnPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

const ADDRESSES = 2_000;
/** Every 10th address appears a second time further down: under `skip`, that row counts as skipped. */
const REPEATS = ADDRESSES / 10;

/** Short locks and sweeps so recovery after a kill takes seconds; small batches so the import takes many transactions. */
const workerEnv = () => ({
  DATABASE_URL: app.databaseUrl,
  ...FAST_RECOVERY_ENV,
  POSTLANE_IMPORT_BATCH_SIZE: '50',
});

const query = <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) =>
  queryDatabase<T>(app.databaseUrl, sql, params);

// The API enqueues into Agenda for real but runs no jobs: only the child worker processes do.
const app = useTestApp({ jobs: 'agenda' });

describe('a contact import across worker crashes', () => {
  it('imports every row exactly once, with exact counts, when the worker is killed mid-import and another resumes', async () => {
    const lines = ['email,first_name'];
    for (let i = 0; i < ADDRESSES; i++) {
      lines.push(`crash${i}@example.com,"Name, ${i}"`);
      if (i % 10 === 9) lines.push(`crash${i - 9}@example.com,Again`);
    }
    const form = new FormData();
    form.append('file', new Blob([`${lines.join('\n')}\n`]), 'crash.csv');
    const response = await fetch(`${app.url}/contacts/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.token}` },
      body: form,
    });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: string };
    const progress = async () =>
      (
        await query<{ rows_done: number; status: string; created_count: number; skipped_count: number }>(
          'SELECT rows_done, status, created_count, skipped_count FROM contact_import WHERE id = $1',
          [id],
        )
      )[0]!;

    // Each batch pauses inside its transaction: the kill lands mid-import, most likely mid-batch.
    const doomed = spawnPostlane(['serve', '--role', 'worker'], { ...workerEnv(), POSTLANE_TEST_SEND_DELAY_MS: '150' });
    await until(async () => (await progress()).rows_done >= 400, 60_000);
    doomed.child.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const atKill = await progress();
    expect(atKill.status).toBe('in_progress');
    expect(atKill.rows_done).toBeLessThan(ADDRESSES + REPEATS);
    // What committed is exactly what the cursor says: no batch half-written.
    const [written] = await query<{ n: number }>('SELECT count(*)::int AS n FROM contact WHERE team_id = $1', [
      app.teamId,
    ]);
    expect(written!.n).toBe(atKill.created_count);
    expect(atKill.created_count + atKill.skipped_count).toBe(atKill.rows_done);

    const survivor = spawnPostlane(['serve', '--role', 'worker'], workerEnv());
    try {
      await until(async () => (await progress()).status === 'completed', 90_000);
    } finally {
      survivor.child.kill('SIGTERM');
      await survivor.exited;
    }
    const done = await app.request('GET', `/contacts/imports/${id}`, { token: app.token });
    expect(done.body).toMatchObject({
      status: 'completed',
      counts: { total: ADDRESSES + REPEATS, created: ADDRESSES, updated: 0, skipped: REPEATS, failed: 0 },
    });
    const [contacts] = await query<{ n: number; names: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE first_name LIKE 'Name, %')::int AS names FROM contact WHERE team_id = $1`,
      [app.teamId],
    );
    expect(contacts).toEqual({ n: ADDRESSES, names: ADDRESSES });
    // No row twice: one contact.created per address.
    const twice = await query(
      `SELECT payload->>'email' AS email FROM event WHERE team_id = $1 AND type = 'contact.created' GROUP BY 1 HAVING count(*) <> 1`,
      [app.teamId],
    );
    expect(twice).toEqual([]);
    const [events] = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM event WHERE team_id = $1 AND type = 'contact.created'`,
      [app.teamId],
    );
    expect(events!.n).toBe(ADDRESSES);
    expect(await query('SELECT 1 FROM contact_import_chunk WHERE contact_import_id = $1', [id])).toEqual([]);
  }, 180_000);
});
