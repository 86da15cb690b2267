import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { initOrm } from '../../../server/db/orm.js';
import type { ITeam } from '../../../server/entities/index.js';
import { createTeam } from '../../../server/services/teams/create-team.js';
import { PgShaper } from '../../../server/providers/direct/pg-shaper.js';
import { loadShapingProfiles } from '../../../server/providers/direct/shaping-profiles.js';
import { createTestDatabase } from '../../support/db.js';
import { startDnsServer } from '../../support/dns-server.js';
import { runPostlane } from '../../support/postlane-process.js';

// Each command is a process of its own (a couple of seconds each on a busy machine).
vi.setConfig({ testTimeout: 120_000 });

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let team: ITeam;
/** The shaper's clock, well after the CLI's (real) now: the suspension it makes is in force for the commands. */
const now = new Date('2099-01-10T12:00:00.000Z');
const GROUP = 'mx1.hosting.test,mx2.hosting.test';

const cli = (args: string[]) =>
  runPostlane(args, { DATABASE_URL: database.url, POSTLANE_DNS_SERVERS: dns.address, POSTLANE_DNS_TIMEOUT_MS: '500' });
const json = async (args: string[]) => {
  const result = await cli([...args, '--json']);
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

const sql = <T>(text: string, params: unknown[] = []) => orm.em.fork().getConnection().execute<T[]>(text, params);

/** An email deferred an hour ago for `address`'s domain (and, at a shop.example address, the group), as settling records it. */
async function deferredEmail(address: string): Promise<string> {
  const domain = address.slice(address.indexOf('@') + 1);
  const [email] = await sql<{ id: string }>(
    `INSERT INTO email (id, created_at, team_id, "from", "to", cc, bcc, reply_to, subject, region, message_id, status,
       last_event, send_after, attempts, updated_at, deferred_domains, deferred_groups)
     VALUES (gen_random_uuid(), now(), ?, 'news@acme.test', ARRAY[?], '{}', '{}', '{}', 'deferred', 'us-east-1',
       '<' || gen_random_uuid() || '@acme.test>', 'queued', 'delivery_delayed', now() + interval '1 hour', 1, now(),
       ARRAY[?], CASE WHEN ? = 'shop.example' THEN ARRAY[?] END)
     RETURNING id`,
    [team.id, address, domain, domain, GROUP],
  );
  await sql(
    `INSERT INTO email_recipient (id, created_at, email_id, kind, address, status)
     SELECT gen_random_uuid(), created_at, id, 'to', ?, 'pending' FROM email WHERE id = ?`,
    [address, email!.id],
  );
  return email!.id;
}
const dueNow = async (id: string) =>
  (await sql<{ due: boolean }>('SELECT send_after <= now() AS due FROM email WHERE id = ?', [id]))[0]!.due;
const failedEvents = async (id: string) =>
  (
    await sql<{ payload: { error: string } }>(
      `SELECT payload FROM event WHERE email_id = ? AND type = 'email.failed'`,
      [id],
    )
  ).map((event) => ({ error: event.payload.error }));

beforeAll(async () => {
  dns = await startDnsServer();
  dns.set('MX', 'shop.example', ['10 mx1.hosting.test', '10 mx2.hosting.test']);
  dns.set('A', 'mx1.hosting.test', ['192.0.2.1']);
  dns.set('A', 'mx2.hosting.test', ['192.0.2.2']);
  database = await createTestDatabase(inject('templateDatabase'));
  orm = await initOrm(loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url }));
  team = await RequestContext.create(orm.em, () => createTeam({ orm }, { name: 'Queue CLI' }));
  const shaper = new PgShaper({ orm, clock: () => now, profiles: loadShapingProfiles() });
  await shaper.recordReply(
    { sourceIp: '198.51.100.7', group: GROUP, profile: 'default' },
    { kind: 'reply', code: 421, class: 'rate_limited', permanent: false, backoff: true },
  );
});
afterAll(async () => {
  await orm.close();
  await database.drop();
  await dns.close();
});

describe('postlane queue', () => {
  it('lists the group a 421 suspended, in --json and as a table', async () => {
    expect(await json(['queue'])).toEqual([
      {
        mx_group: GROUP,
        source_ip: '198.51.100.7',
        profile: 'default',
        connections: 0,
        deferrals: 1,
        connection_failures: 0,
        suspensions: 1,
        suspended_until: '2099-01-10T12:01:00.000Z',
        backoff_level: 1,
        last_reply: '421 rate_limited (temporary)',
        last_reply_at: now.toISOString(),
      },
    ]);
    const table = await cli(['queue']);
    expect(table.code, table.output).toBe(0);
    expect(table.stdout).toMatch(/mx1\.hosting\.test,mx2\.hosting\.test.*198\.51\.100\.7.*2099-01-10 12:01:00/);
  });

  it('status shows the suspended group with its until and last reply', async () => {
    const status = await cli(['status', '--json']);
    expect(JSON.parse(status.stdout).suspended_groups, status.output).toEqual([
      expect.objectContaining({ mx_group: GROUP, suspended_until: '2099-01-10T12:01:00.000Z' }),
    ]);
    const screen = await cli(['status']);
    expect(screen.stdout).toContain('Suspended MX groups');
    expect(screen.stdout).toContain('421 rate_limited (temporary)');
  });

  it('resume by domain says which group it matched, and lifts the suspension and back-off', async () => {
    expect(await json(['queue', 'resume', 'shop.example'])).toEqual({
      group: GROUP,
      matched: 'domain',
      domain: 'shop.example',
      source_ips: ['198.51.100.7'],
      suspended_until: null,
      emails: 0,
    });
    expect(await json(['queue'])).toEqual([expect.objectContaining({ suspended_until: null, backoff_level: 0 })]);
    // status exits 1 here (no service runs), its --json is complete all the same.
    expect(JSON.parse((await cli(['status', '--json'])).stdout).suspended_groups).toEqual([]);
  });

  it('suspend by group for a while, and by domain in words', async () => {
    const before = Date.now();
    const change = await json(['queue', 'suspend', GROUP, '--for', '2h']);
    expect(change).toMatchObject({ group: GROUP, matched: 'group', domain: null, source_ips: ['198.51.100.7'] });
    const until = Date.parse(change.suspended_until);
    expect(until).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000);
    const said = await cli(['queue', 'suspend', 'shop.example']);
    expect(said.code, said.output).toBe(0);
    expect(said.stdout).toContain(`Suspended ${GROUP} (the MX group of shop.example) until`);
  });

  it('refuses a bad --for and a domain with no group, with a clear message', async () => {
    const bad = await cli(['queue', 'suspend', GROUP, '--for', '10s']);
    expect(bad.code).not.toBe(0);
    expect(bad.output).toContain('must be minutes, hours or days');
    const unknown = await cli(['queue', 'resume', 'nowhere.example']);
    expect(unknown.code).toBe(1);
    expect(unknown.output).toContain('nowhere.example is no MX group direct delivery has used');
  });

  it('retry makes the deferred mail due now, and says how many', async () => {
    const id = await deferredEmail('retry@shop.example');
    expect(await json(['queue', 'retry', 'shop.example'])).toMatchObject({
      group: GROUP,
      matched: 'domain',
      domain: 'shop.example',
      emails: 1,
    });
    expect(await dueNow(id)).toBe(true);
    const said = await cli(['queue', 'retry', GROUP]);
    expect(said.code, said.output).toBe(0);
    expect(said.stdout).toContain(
      `Retrying 1 deferred email of ${GROUP} now; suspension and back-off of ${GROUP} cleared for 198.51.100.7.`,
    );
  });

  it('purge asks first, or needs --yes without a terminal; then fails the mail with the reason and email.failed', async () => {
    const id = await deferredEmail('purge@gone.example');
    const refused = await cli(['queue', 'purge', 'gone.example']);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('pass --yes to confirm');
    expect(await failedEvents(id)).toEqual([]);

    expect(await json(['queue', 'purge', 'gone.example', '--yes', '--reason', 'domain retired'])).toEqual({
      matched: 'domain',
      group: null,
      domain: 'gone.example',
      reason: 'domain retired',
      emails: 1,
    });
    expect(await failedEvents(id)).toEqual([{ error: 'domain retired' }]);
    const said = await cli(['queue', 'purge', 'gone.example', '--yes']);
    expect(said.code, said.output).toBe(0);
    expect(said.stdout).toContain('Purged 0 deferred emails of gone.example: failed, "purged by operator".');
  });

  it('says the database is down instead of failing obscurely', async () => {
    const down = await runPostlane(['queue'], { DATABASE_URL: 'postgres://postlane@127.0.0.1:1/postlane' });
    expect(down.code).toBe(1);
    expect(down.output).toContain('Is PostgreSQL running?');
  });
});
