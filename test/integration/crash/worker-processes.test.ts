import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { adminQuery, databaseUrl, queryDatabase, uniqueDatabaseName } from '../../support/db.js';
import { FAST_RECOVERY_ENV, spawnPostlane } from '../../support/postlane-process.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

let sink: Awaited<ReturnType<typeof startSmtpSink>>;

/** Short leases and locks so recovery after a kill takes seconds, not minutes. */
const workerEnv = () => ({
  DATABASE_URL: app.databaseUrl,
  ...FAST_RECOVERY_ENV,
  POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]),
  POSTLANE_JOB_CONCURRENCY: '2',
});

const query = <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) =>
  queryDatabase<T>(app.databaseUrl, sql, params);

const sendMany = async (count: number, subject: string) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await app.request('POST', '/emails', {
      token: app.token,
      body: { from: 'a@acme.test', to: `r${i}@example.com`, subject, text: 'x' },
    });
    ids.push(res.body.id);
  }
  return ids;
};

beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink.close();
});
// The API enqueues into Agenda for real but runs no jobs: only the child worker processes do.
const app = useTestApp({ jobs: 'agenda' });

describe('worker processes', () => {
  it('sends every email exactly once when a worker is killed mid-send and another takes over', async () => {
    const ids = await sendMany(8, 'crash test');
    // Batches of one, so a claimed row means "this worker is inside the pause before sending it".
    const doomed = spawnPostlane(['serve', '--role', 'worker'], {
      ...workerEnv(),
      POSTLANE_SEND_BATCH_SIZE: '1',
      POSTLANE_TEST_SEND_DELAY_MS: '1500',
    });
    await sink.waitFor(1);
    // Claimed rows that have not reached the sink yet; one that has is in the documented at-least-once window.
    await until(async () => {
      const claimed = await query<{ id: string }>(`SELECT id FROM email WHERE status = 'sending'`);
      const arrived = new Set(sink.received.map((m) => m.parsed.messageId));
      return claimed.length > 0 && claimed.every((row) => !arrived.has(`<${row.id}@acme.test>`));
    });
    doomed.child.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    expect(sink.received.length).toBeLessThan(ids.length);

    const survivor = spawnPostlane(['serve', '--role', 'worker'], workerEnv());
    try {
      await sink.waitFor(ids.length, 40_000);
      // Once every row is settled as sent no worker can claim one again, and a send in flight would hold
      // its row in `sending`: from then on the sink's count is final.
      const sent = async () =>
        (await query<{ status: string }>(`SELECT status FROM email WHERE id = ANY($1::uuid[])`, [ids])).every(
          (row) => row.status === 'sent',
        );
      await until(sent, 40_000);
      const messageIds = sink.received.filter((m) => m.parsed.subject === 'crash test').map((m) => m.parsed.messageId);
      expect(messageIds.sort()).toEqual(ids.map((id) => `<${id}@acme.test>`).sort());
      const rows = await query<{ status: string }>(`SELECT status FROM email WHERE id = ANY($1::uuid[])`, [ids]);
      expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'sent'));
    } finally {
      survivor.child.kill('SIGTERM');
      await survivor.exited;
    }
  }, 90_000);

  it('drains on SIGTERM, exits 0 and leaves no job locked under its name', async () => {
    const worker = spawnPostlane(['serve', '--role', 'worker'], { ...workerEnv(), POSTLANE_TEST_SEND_DELAY_MS: '300' });
    await worker.waitForOutput(/postlane started/);
    const ids = await sendMany(6, 'drain test');
    await sink.waitFor(sink.received.length + 1);
    const signalled = Date.now();
    worker.child.kill('SIGTERM');
    const { code } = await worker.exited;
    // Jobs take 300 ms here: draining must not sit out the 25 s grace period.
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(code).toBe(0);
    const name = `%:${worker.child.pid}:worker`;
    const locked = await query(
      `SELECT id FROM agenda_jobs WHERE last_modified_by LIKE $1 AND locked_at IS NOT NULL AND next_run_at IS NOT NULL`,
      [name],
    );
    expect(locked).toEqual([]);

    const next = spawnPostlane(['serve', '--role', 'worker'], workerEnv());
    try {
      await until(() => sink.received.filter((m) => m.parsed.subject === 'drain test').length >= ids.length, 30_000);
      const drained = sink.received.filter((m) => m.parsed.subject === 'drain test').map((m) => m.parsed.messageId);
      expect(drained.sort()).toEqual(ids.map((id) => `<${id}@acme.test>`).sort());
    } finally {
      next.child.kill('SIGTERM');
      await next.exited;
    }
  }, 60_000);

  it('waits for a database that is not there yet, then starts', async () => {
    const name = uniqueDatabaseName('postlane_late');
    const worker = spawnPostlane(['serve', '--role', 'worker'], { ...workerEnv(), DATABASE_URL: databaseUrl(name) });
    try {
      await worker.waitForOutput(/waiting for the database/);
      await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${inject('templateDatabase')}"`);
      await worker.waitForOutput(/postlane started/, 30_000);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  }, 60_000);
});
