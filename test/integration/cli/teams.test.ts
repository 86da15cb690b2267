import { describe, expect, it } from 'vitest';
import { TEAM_TABLES } from '../../../server/services/teams/delete-team.js';
import { checkDeliverability } from '../../../server/services/deliverability/check-deliverability.js';
import { queryDatabase } from '../../support/db.js';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';

const cli = (args: string[]) => runPostlane(args, { DATABASE_URL: app.databaseUrl });

const app = useTestApp({ env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });

describe('postlane teams', () => {
  it('create with owners and a plan, list, show, update', async () => {
    const created = await cli([
      'teams',
      'create',
      '--name',
      'Acme',
      '--owner',
      'Ops@Acme.test',
      '--owner',
      'cto@acme.test',
      '--plan',
      'pro',
      '--json',
    ]);
    expect(created.code, created.output).toBe(0);
    const team = JSON.parse(created.stdout);
    expect(team).toEqual({
      id: expect.any(String),
      name: 'Acme',
      plan: 'pro',
      owner_emails: ['ops@acme.test', 'cto@acme.test'],
    });

    // Every team, oldest first: the file's shared one, then this.
    const list = JSON.parse((await cli(['teams', 'list', '--json'])).stdout);
    expect(list).toEqual([
      expect.objectContaining({ id: app.teamId }),
      expect.objectContaining({
        id: team.id,
        name: 'Acme',
        plan: 'pro',
        owner_emails: ['ops@acme.test', 'cto@acme.test'],
      }),
    ]);

    const updated = await cli(['teams', 'update', team.id, '--owner', 'new@acme.test', '--overage', 'on', '--json']);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      owner_emails: ['new@acme.test'],
      overage_enabled: true,
      plan: 'pro',
      name: 'Acme',
    });

    const shown = await cli(['teams', 'show', team.id]);
    expect(shown.code, shown.output).toBe(0);
    expect(shown.stdout).toContain('Acme');
    expect(shown.stdout).toContain('Plan: pro, overage on');
    expect(shown.stdout).toContain('Owners: new@acme.test');
    expect(shown.stdout).toMatch(/API keys: 0\s+Domains: 0\s+Contacts: 0\s+Accepted today: 0/);
  });

  it('show reports the rates and the pause; unpause lifts it, and the rates cannot pause the team again until the lift runs out', async () => {
    const { token, teamId } = await app.createTeamWithKey();
    // 2,000 accepted today, 15% bounced: past the default pause line (10%).
    await queryDatabase(
      app.databaseUrl,
      `INSERT INTO deliverability_day (team_id, day, region, shard, sent, bounced, complained) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 'us-east-1', 0, 2000, 300, 1)`,
      [teamId],
    );
    await app.run(() => checkDeliverability(app.deps));
    const send = () =>
      app.request('POST', '/emails', {
        token,
        body: { from: 'a@acme.test', to: 'b@example.com', subject: 'Hi', text: 'Hi' },
      });
    expect((await send()).body.name).toBe('sending_paused');

    const shown = JSON.parse((await cli(['teams', 'show', teamId, '--json'])).stdout);
    expect(shown.deliverability).toEqual({
      window_days: 7,
      min_volume: 1000,
      sent: 2000,
      bounced: 300,
      complained: 1,
      bounce_rate: 0.15,
      complaint_rate: 0.0005,
      lines: { bounce_rate: { warning: 0.05, pause: 0.1 }, complaint_rate: { warning: 0.001, pause: 0.005 } },
      sending_paused_at: expect.any(String),
      episodes: [
        {
          metric: 'bounce_rate',
          warned_at: expect.any(String),
          paused_at: shown.deliverability.sending_paused_at,
          lifted_until: null,
        },
      ],
      broadcasts_paused_regions: ['us-east-1'],
    });
    const text = await cli(['teams', 'show', teamId]);
    expect(text.stdout).toContain(
      'Deliverability, last 7 days: 2000 sent; bounces 15% (300; warning at 5%, pause at 10%); complaints 0.05% (1; warning at 0.1%, pause at 0.5%)',
    );
    expect(text.stdout).toContain('Sending: PAUSED since');

    const lifted = await cli(['teams', 'unpause', teamId, '--hours', '2', '--json']);
    expect(lifted.code, lifted.output).toBe(0);
    expect(JSON.parse(lifted.stdout)).toEqual({
      id: teamId,
      sending_paused_at: null,
      lifted_until: expect.any(String),
    });
    expect((await send()).status).toBe(200);
    await app.run(() => checkDeliverability(app.deps));
    expect((await send()).status).toBe(200);
    expect((await cli(['teams', 'show', teamId])).stdout).toContain('pause lifted by hand until');

    const again = await cli(['teams', 'unpause', teamId]);
    expect(again.code).toBe(1);
    expect(again.output).toContain('not paused');
    // Five CLI processes, each a Node start-up on a shared machine.
  }, 120_000);

  it('update --ip-pool pins a team to a pool a direct provider names, refuses another name, and default unpins it', async () => {
    const env = {
      DATABASE_URL: app.databaseUrl,
      POSTLANE_PROVIDERS: JSON.stringify([
        { type: 'capture', regions: ['us-east-1'] },
        {
          type: 'direct',
          regions: ['direct'],
          ehlo_name: 'out.example.test',
          source_ips: ['192.0.2.1', '192.0.2.2'],
          pools: { vip: ['192.0.2.2'] },
        },
      ]),
    };
    const pool = (name: string) => runPostlane(['teams', 'update', app.teamId, '--ip-pool', name, '--json'], env);
    const unknown = await pool('gold');
    expect(unknown.code).toBe(1);
    expect(unknown.output).toContain('no direct provider in POSTLANE_PROVIDERS has a pool named gold (pools: vip)');
    expect(JSON.parse((await pool('vip')).stdout)).toMatchObject({ id: app.teamId, ip_pool: 'vip' });
    expect((await runPostlane(['teams', 'show', app.teamId], env)).stdout).toContain('Source IP pool: vip');
    expect(JSON.parse((await pool('default')).stdout)).toMatchObject({ ip_pool: null });
  }, 120_000);

  it('refuses an owner that is not a bare address, or an unknown plan', async () => {
    const owner = await cli(['teams', 'create', '--name', 'X', '--owner', 'Ann <ann@acme.test>']);
    expect(owner.code).toBe(1);
    expect(owner.output).toContain(
      "error: option '--owner <email>' argument 'Ann <ann@acme.test>' is invalid. must be a bare email address",
    );
    expect(owner.output).not.toMatch(/\n\s+at /);
    const plan = await cli(['teams', 'create', '--name', 'X', '--plan', 'gold']);
    expect(plan.code).not.toBe(0);
    expect(plan.output).toContain('gold');
  });

  it('delete refuses while mail is in flight unless --force, asks for --yes without a terminal, and leaves nothing of the team', async () => {
    const { teamId, token } = await app.createTeamWithKey('full_access', { verifiedDomains: ['gone.example.com'] });
    const headers = { token };
    expect((await app.request('POST', '/contacts', { ...headers, body: { email: 'c@example.com' } })).status).toBe(201);
    expect(
      (
        await app.request('POST', '/webhooks', {
          ...headers,
          body: { endpoint: 'http://127.0.0.1:9/hook', events: ['*'] },
        })
      ).status,
    ).toBe(201);
    const sent = await app.request('POST', '/emails', {
      ...headers,
      body: { from: 'a@gone.example.com', to: 'b@example.com', subject: 'in flight', text: 'x' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);

    const unasked = await cli(['teams', 'delete', teamId, '--json']);
    expect(unasked.code).toBe(1);
    expect(JSON.parse(unasked.stdout).error.message).toMatch(/pass --yes to confirm/);
    const inFlight = await cli(['teams', 'delete', teamId, '--yes', '--json']);
    expect(inFlight.code).toBe(1);
    expect(JSON.parse(inFlight.stdout).error).toMatchObject({
      name: 'conflict',
      message: expect.stringContaining('has 1 email queued or sending'),
    });
    const forced = await cli(['teams', 'delete', teamId, '--yes', '--force', '--json']);
    expect(forced.code, forced.output).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ id: teamId, deleted: true, dropped_in_flight: 1 });

    // Nothing anywhere still names the team, nor its email.
    const tables = (await queryDatabase(
      app.databaseUrl,
      `SELECT c.relname AS table FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE a.attname = 'team_id' AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relnamespace = 'public'::regnamespace`,
    )) as { table: string }[];
    expect(tables.length).toBeGreaterThan(20);
    for (const { table } of tables) {
      const [row] = (await queryDatabase(
        app.databaseUrl,
        `SELECT count(*)::int AS n FROM ${table} WHERE team_id = $1`,
        [teamId],
      )) as { n: number }[];
      expect(row!.n, table).toBe(0);
    }
    for (const table of ['email_recipient', 'email_attachment'])
      expect(
        await queryDatabase(app.databaseUrl, `SELECT 1 FROM ${table} WHERE email_id = $1`, [sent.body.id]),
        table,
      ).toEqual([]);
    const gone = await cli(['teams', 'show', teamId]);
    expect(gone.code).toBe(1);
  });

  it('every table with a team_id is deleted by teams delete or cascades from the team row', async () => {
    const rows = (await queryDatabase(
      app.databaseUrl,
      `SELECT c.relname AS table,
              EXISTS (SELECT 1 FROM pg_constraint f WHERE f.conrelid = c.oid AND f.contype = 'f'
                        AND f.confrelid = 'team'::regclass AND f.confdeltype = 'c') AS cascades
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE a.attname = 'team_id' AND NOT a.attisdropped AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relnamespace = 'public'::regnamespace`,
    )) as { table: string; cascades: boolean }[];
    const listed = new Set<string>(TEAM_TABLES);
    expect(rows.filter((r) => !r.cascades && !listed.has(r.table)).map((r) => r.table)).toEqual([]);
  });
});
