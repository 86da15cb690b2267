import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type IdempotencyRecord,
  IdempotencyKeyTaken,
  QueuedEmailWriter,
  type QueuedEmailRow,
} from '../../../server/services/outbox/queued-email-writer.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const row = (team: string): QueuedEmailRow => {
  const id = randomUUID();
  return {
    id,
    team_id: team,
    from: 'a@acme.test',
    to: ['b@example.com'],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: 's',
    html: null,
    text: 't',
    headers: {},
    tags: [],
    attachments: [],
    region: 'us-east-1',
    message_id: `<${id}@acme.test>`,
    created_at: new Date().toISOString(),
    scheduled_at: null,
    topic_id: null,
    park_until: null,
    recipients: [{ kind: 'to', address: 'b@example.com' }],
  };
};

describe('QueuedEmailWriter', () => {
  it('fails only the row that fails on its own when a shared statement fails', async () => {
    const rows = Array.from({ length: 30 }, () => row(app.teamId));
    const doomed = row(randomUUID()); // no such team: the foreign key refuses it
    const results = await Promise.allSettled(
      [...rows.slice(0, 15), doomed, ...rows.slice(15)].map((r) => app.deps.emailWriter.write(r)),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[15]!.status).toBe('rejected');
    const stored = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('SELECT count(*) AS n FROM email WHERE id = ANY(?::uuid[])', [
        `{${rows.map((r) => r.id).join(',')}}`,
      ]);
    expect(Number(stored[0]!.n)).toBe(30);
  });

  it('inside a transaction, wakes the workers only once it has ended', async () => {
    const { wakes } = app;
    const before = wakes.length;
    await app.run(() =>
      app.deps.orm.em.transactional(async () => {
        await app.deps.emailWriter.write(row(app.teamId));
        expect(wakes.length).toBe(before);
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(wakes.slice(before)).toEqual(['email.drain']);
    const rolledBack = row(app.teamId);
    await expect(
      app.run(() =>
        app.deps.orm.em.transactional(async () => {
          await app.deps.emailWriter.write(rolledBack);
          throw new Error('changed my mind');
        }),
      ),
    ).rejects.toThrow('changed my mind');
    expect(
      await app.deps.orm.em.fork().getConnection().execute('SELECT 1 FROM email WHERE id = ?', [rolledBack.id]),
    ).toEqual([]);
  });

  it('wakes the workers once the rows are committed', async () => {
    const { wakes } = app;
    const before = wakes.length;
    await app.deps.emailWriter.write(row(app.teamId));
    expect(wakes.slice(before)).toEqual(['email.drain']);
  });

  it('books a drain run for the region due no later than its emails, unless one is already waiting', async () => {
    const sql = (text: string) =>
      app.deps.orm.em.fork().getConnection().execute<{ next_run_at: Date; locked_at: Date | null }[]>(text);
    const drains = async () =>
      (await sql(`SELECT next_run_at, locked_at FROM agenda_jobs WHERE name = 'email.drain' ORDER BY next_run_at`)).map(
        (j) => [new Date(j.next_run_at).getTime(), j.locked_at !== null],
      );
    await sql(`DELETE FROM agenda_jobs WHERE name = 'email.drain'`);
    const inAnHour = new Date(Date.now() + 3_600_000);
    await app.deps.emailWriter.write({ ...row(app.teamId), scheduled_at: inAnHour.toISOString() });
    expect(await drains()).toEqual([[inAnHour.getTime(), false]]);
    // Due now: the run waiting for later is too late for it.
    await app.deps.emailWriter.write(row(app.teamId));
    await app.deps.emailWriter.write(row(app.teamId));
    const [now] = await drains();
    expect(now![0]).toBeLessThanOrEqual(Date.now());
    expect(await drains()).toHaveLength(2);
    // A run already started (locked) does not count: it may have looked for the last time.
    await sql(`UPDATE agenda_jobs SET locked_at = now() WHERE name = 'email.drain' AND next_run_at <= now()`);
    await app.deps.emailWriter.write(row(app.teamId));
    expect((await drains()).map(([, locked]) => locked).sort()).toEqual([false, false, true]);
  });

  it('writes one of two requests with one key queued for the same statement, and refuses the other whole', async () => {
    // One statement at a time, the first busy: both keyed rows wait for the next one.
    const writer = new QueuedEmailWriter(app.deps.orm, { wake: () => {} }, 1);
    const key = randomUUID();
    const record = (response: unknown): IdempotencyRecord => ({
      teamId: app.teamId,
      key,
      requestHash: Buffer.alloc(32),
      statusCode: 200,
      response,
    });
    const [first, second] = [row(app.teamId), row(app.teamId)];
    const results = await Promise.allSettled([
      writer.write(row(app.teamId)),
      writer.write(first, record({ id: first.id })),
      writer.write(second, record({ id: second.id })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyKeyTaken);
    const sql = app.deps.orm.em.fork().getConnection();
    expect(await sql.execute('SELECT id FROM email WHERE id IN (?, ?)', [first.id, second.id])).toEqual([
      { id: first.id },
    ]);
    expect(await sql.execute('SELECT state, response FROM idempotency_key WHERE key = ?', [key])).toEqual([
      { state: 'done', response: { id: first.id } },
    ]);
  });

  it("counts only the emails it wrote in the day's usage", async () => {
    const team = await app.createTeamWithKey();
    const key = randomUUID();
    const record: IdempotencyRecord = {
      teamId: team.teamId,
      key,
      requestHash: Buffer.alloc(32),
      statusCode: 200,
      response: {},
    };
    await app.deps.emailWriter.writeTogether([row(team.teamId), row(team.teamId)], record);
    await expect(app.deps.emailWriter.writeTogether([row(team.teamId)], record)).rejects.toBeInstanceOf(
      IdempotencyKeyTaken,
    );
    const [usage] = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('SELECT sum(accepted) AS n FROM team_daily_usage WHERE team_id = ?', [team.teamId]);
    expect(Number(usage!.n)).toBe(2);
  });
});
