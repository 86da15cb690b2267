import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { initOrm } from '../../../server/db/orm.js';
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

beforeAll(async () => {
  dns = await startDnsServer();
  dns.set('MX', 'shop.example', ['10 mx1.hosting.test', '10 mx2.hosting.test']);
  dns.set('A', 'mx1.hosting.test', ['192.0.2.1']);
  dns.set('A', 'mx2.hosting.test', ['192.0.2.2']);
  database = await createTestDatabase(inject('templateDatabase'));
  orm = await initOrm(loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url }));
  const shaper = new PgShaper({ orm, clock: () => now, profiles: loadShapingProfiles() });
  await shaper.recordReply(
    { sourceIp: '198.51.100.7', group: GROUP, profile: 'default' },
    { kind: 'reply', code: 421, class: 'rate_limited', permanent: false },
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

  it('says the database is down instead of failing obscurely', async () => {
    const down = await runPostlane(['queue'], { DATABASE_URL: 'postgres://postlane@127.0.0.1:1/postlane' });
    expect(down.code).toBe(1);
    expect(down.output).toContain('Is PostgreSQL running?');
  });
});
