import { describe, expect, it } from 'vitest';
import { purgeIdempotencyKeys } from '../../../server/services/maintenance/purges.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const valid = { from: 'a@acme.test', to: 'b@example.com', subject: 'Once', text: 'only once' };
const send = (key: string, body: unknown = valid, as = app.token) =>
  app.request('POST', '/emails', { token: as, body, headers: { 'idempotency-key': key } });

describe('Idempotency-Key on POST /emails', () => {
  it('answers a repeat with the original response and sends nothing again', async () => {
    const key = crypto.randomUUID();
    const first = await send(key);
    const again = await send(key, { subject: 'Once', text: 'only once', to: 'b@example.com', from: 'a@acme.test' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await app.countEmails('Once')).toBe(1);
  });

  it('refuses the same key with another body (409)', async () => {
    const key = crypto.randomUUID();
    expect((await send(key)).status).toBe(200);
    const other = await send(key, { ...valid, subject: 'Different' });
    expect(other.status).toBe(409);
    expect(other.body.name).toBe('invalid_idempotent_request');
  });

  it('gives many concurrent identical requests one email', async () => {
    const key = crypto.randomUUID();
    const body = { ...valid, subject: 'Concurrent once' };
    const results = await Promise.all(Array.from({ length: 100 }, () => send(key, body)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.name).toBe('concurrent_idempotent_requests');
    expect(await app.countEmails('Concurrent once')).toBe(1);
  });

  it('stores nothing for a refused request, so the fixed request can reuse the key', async () => {
    const key = crypto.randomUUID();
    expect((await send(key, { ...valid, to: 'not an address', subject: 'Fixed later' })).status).toBe(422);
    expect((await send(key, { ...valid, subject: 'Fixed later' })).status).toBe(200);
    expect(await app.countEmails('Fixed later')).toBe(1);
  });

  it('replays a stored answer even when the same send would now be refused, and stores nothing for a refused one', async () => {
    const key = crypto.randomUUID();
    const body = { ...valid, to: 'later-suppressed@example.com', subject: 'Replay over refusal' };
    const first = await send(key, body);
    expect(first.status).toBe(200);
    expect(
      (
        await app.request('POST', '/suppressions', {
          token: app.token,
          body: { email: 'later-suppressed@example.com' },
        })
      ).status,
    ).toBe(201);
    const again = await send(key, body);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // Another body under the stored key is still a 409, not the send's own refusal.
    expect((await send(key, { ...body, subject: 'Other' })).body.name).toBe('invalid_idempotent_request');
    const fresh = crypto.randomUUID();
    expect((await send(fresh, body)).status).toBe(422);
    const stored = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute('SELECT 1 FROM idempotency_key WHERE key = ?', [fresh]);
    expect(stored).toEqual([]);
    expect(await app.countEmails('Replay over refusal')).toBe(1);
  });

  it('refuses an empty or overlong key with 400', async () => {
    for (const key of ['', 'k'.repeat(257)]) {
      const res = await send(key);
      expect(res.status).toBe(400);
      expect(res.body.name).toBe('invalid_idempotency_key');
    }
  });

  it('keeps keys per team', async () => {
    const other = await app.createTeamWithKey();
    const key = crypto.randomUUID();
    const mine = await send(key, { ...valid, subject: 'Per team' });
    const theirs = await send(key, { ...valid, subject: 'Per team' }, other.token);
    expect(theirs.status).toBe(200);
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('treats a key older than 24 hours as absent, and the hourly purge removes it', async () => {
    const key = crypto.randomUUID();
    const first = await send(key, { ...valid, subject: 'Day old' });
    const connection = app.deps.orm.em.fork().getConnection();
    await connection.execute(`UPDATE idempotency_key SET created_at = now() - interval '25 hours' WHERE key = ?`, [
      key,
    ]);
    const again = await send(key, { ...valid, subject: 'Day old' });
    expect(again.status).toBe(200);
    expect(again.body.id).not.toBe(first.body.id);
    await connection.execute(`UPDATE idempotency_key SET created_at = now() - interval '25 hours' WHERE key = ?`, [
      key,
    ]);
    expect(await app.run(() => purgeIdempotencyKeys(app.deps))).toBeGreaterThanOrEqual(1);
    expect(await connection.execute('SELECT 1 FROM idempotency_key WHERE key = ?', [key])).toEqual([]);
  });

  it('books the send of an idempotent request like any other', async () => {
    // No drain waiting beforehand, so the one after comes from this request's commit.
    await app.deps.orm.em.fork().getConnection().execute(`DELETE FROM agenda_jobs WHERE name = 'email.drain'`);
    const res = await send(crypto.randomUUID(), { ...valid, subject: 'Idempotent job' });
    const jobs = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<unknown[]>(
        `SELECT 1 FROM agenda_jobs j JOIN email e ON e.id = ?
        WHERE j.name = 'email.drain' AND j.data->>'region' = e.region AND j.locked_at IS NULL AND j.next_run_at <= e.send_after`,
        [res.body.id],
      );
    expect(jobs).toHaveLength(1);
  });

  it('answers two concurrent requests with one key and different bodies: one is sent, the other refused (409)', async () => {
    const key = crypto.randomUUID();
    const results = await Promise.all([
      send(key, { ...valid, subject: 'Race A' }),
      send(key, { ...valid, subject: 'Race B' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(results.find((r) => r.status === 409)!.body.name).toBe('invalid_idempotent_request');
    expect((await app.countEmails('Race A')) + (await app.countEmails('Race B'))).toBe(1);
  });
});

describe('Idempotency-Key under a cloud plan (sends decided in a transaction that holds the team)', () => {
  const plans = JSON.stringify({
    free: { quota: 'monthly', emails_per_month: 100, overage_usd_per_1k: 0.9, domains: null, contacts: null },
  });
  const cloud = useTestApp({ env: { POSTLANE_CLOUD: 'true', POSTLANE_RATE_LIMIT: '0', POSTLANE_PLANS: plans } });

  it('sends concurrent identical requests once, counts one email, and answers the others alike', async () => {
    const team = await cloud.createTeamWithKey();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const body = { ...valid, subject: 'Cloud once' };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => cloud.request('POST', '/emails', { token: team.token, body, headers })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect((await cloud.request('GET', '/usage', { token: team.token })).body.accepted_today).toBe(1);
  });
});
