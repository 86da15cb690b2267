import { beforeAll, describe, expect, it } from 'vitest';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';

const sql = (query: string, bindings: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute(query, bindings);

const app = useTestApp();
beforeAll(async () => {
  const mail = { from: 'a@acme.test', to: 'b@example.com', subject: 'Hi', text: 'Hi' };
  const batch = await app.request('POST', '/emails/batch', { token: app.token, body: [mail, mail, mail] });
  const emailId: string = batch.body.data[0].id;
  await sql(
    `INSERT INTO team_daily_usage (team_id, day, shard, accepted) VALUES (?, (now() AT TIME ZONE 'UTC')::date - 1, 0, 12)`,
    [app.teamId],
  );
  for (const [type, age] of [
    ['email.delivered', '0'],
    ['email.delivered', '0'],
    ['email.bounced', '0'],
    ['email.complained', '1'],
    ['email.sent', '0'],
  ]) {
    await sql(
      `INSERT INTO event (id, created_at, team_id, email_id, type, payload) VALUES (gen_random_uuid(), now() - make_interval(days => ?), ?, ?, ?, '{"from": "a@acme.test"}')`,
      [Number(age), app.teamId, emailId, type],
    );
  }
});

describe('postlane usage', () => {
  it('--json: plan, today, and per-day accepted, delivered, bounced and complained', async () => {
    const result = await runPostlane(['usage', '--days', '3', '--json'], { DATABASE_URL: app.databaseUrl });
    expect(result.code, result.output).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      team_id: app.teamId,
      object: 'usage',
      plan: null,
      cloud: false,
      accepted_today: 3,
      period: null,
    });
    expect(report.days.map((d: Record<string, unknown>) => [d.accepted, d.delivered, d.bounced, d.complained])).toEqual(
      [
        [0, 0, 0, 0],
        [12, 0, 0, 1],
        [3, 2, 1, 0],
      ],
    );
  });

  it('keeps the days whose emails and events are gone (retention): it reads the hourly metrics', async () => {
    await sql(`DELETE FROM event WHERE team_id = ?`, [app.teamId]);
    await sql(`DELETE FROM email WHERE team_id = ?`, [app.teamId]);
    const result = await runPostlane(['usage', '--days', '3', '--json'], { DATABASE_URL: app.databaseUrl });
    const report = JSON.parse(result.stdout);
    expect(report.days.map((d: Record<string, unknown>) => [d.delivered, d.bounced, d.complained])).toEqual([
      [0, 0, 0],
      [0, 0, 1],
      [2, 1, 0],
    ]);
  });

  it('draws a bar per day, scaled to the busiest', async () => {
    const result = await runPostlane(['usage', '--days', '2', '--team', app.teamId], {
      DATABASE_URL: app.databaseUrl,
      POSTLANE_CLOUD: 'true',
    });
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('Plan: free');
    expect(result.stdout).toContain('Accepted today: 3 of 100');
    const bars = result.stdout.split('\n').filter((line) => /^\d{4}-\d\d-\d\d/.test(line));
    expect(bars).toHaveLength(2);
    expect(bars[0]).toContain('█'.repeat(40));
    expect(bars[1]).toContain('█'.repeat(10));
  });

  it('refuses a bad --days', async () => {
    const result = await runPostlane(['usage', '--days', '0'], { DATABASE_URL: app.databaseUrl });
    expect(result.code).toBe(1);
    expect(result.output).toContain(
      "error: option '--days <n>' argument '0' is invalid. must be a whole number from 1 to 366",
    );
    expect(result.output).not.toMatch(/\n\s+at /);
  });
});
