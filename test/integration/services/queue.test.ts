import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { initOrm } from '../../../server/db/orm.js';
import { DnsResolver } from '../../../server/dns/resolver.js';
import { RecordingJobQueue } from '../../../server/jobs/index.js';
import { createLogger } from '../../../server/logger.js';
import { Metrics } from '../../../server/metrics/metrics.js';
import { PgShaper } from '../../../server/providers/direct/pg-shaper.js';
import type { ShapingKey } from '../../../server/providers/direct/shaper.js';
import { loadShapingProfiles } from '../../../server/providers/direct/shaping-profiles.js';
import { listQueue } from '../../../server/services/queue/list-queue.js';
import { resumeGroup } from '../../../server/services/queue/resume-group.js';
import { suspendGroup } from '../../../server/services/queue/suspend-group.js';
import { topGroups } from '../../../server/services/queue/top-groups.js';
import { suspendedGroupsSection } from '../../../server/services/status/suspended-groups-section.js';
import { createTestDatabase } from '../../support/db.js';
import { startDnsServer } from '../../support/dns-server.js';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let shaper: PgShaper;
const now = new Date('2027-01-10T12:00:00.000Z');
const clock = () => now;
const deps = () => ({
  orm,
  clock,
  dns: new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 }),
  jobs: new RecordingJobQueue(),
  logger: createLogger('silent'),
});

/** The group shop.example's MX records name (sorted host names), as direct delivery keys it. */
const GROUP = 'mx1.hosting.test,mx2.hosting.test';
const keyFrom = (sourceIp: string): ShapingKey => ({ sourceIp, group: GROUP, profile: 'default' });
const slowDown = { kind: 'reply', code: 421, class: 'rate_limited', permanent: false, backoff: true } as const;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.set('MX', 'shop.example', ['20 mx2.hosting.test', '10 mx1.hosting.test']);
  dns.set('A', 'mx1.hosting.test', ['192.0.2.1']);
  dns.set('A', 'mx2.hosting.test', ['192.0.2.2']);
  dns.set('MX', 'unsent.example', ['10 mx.elsewhere.test']);
  dns.set('A', 'mx.elsewhere.test', ['192.0.2.3']);
  database = await createTestDatabase(inject('templateDatabase'));
  orm = await initOrm(loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url }));
  shaper = new PgShaper({ orm, clock, profiles: loadShapingProfiles() });
  // Two source IPs for one group: a connection held from the first, a 421 "slow down" on the second.
  const lease = await shaper.openConnection(keyFrom('198.51.100.1'));
  expect(lease).toHaveProperty('release');
  await shaper.recordReply(keyFrom('198.51.100.2'), slowDown);
  // Another group, never deferred.
  await shaper.openConnection({ sourceIp: '198.51.100.1', group: 'mx.quiet.test', profile: 'default' });
});
afterAll(async () => {
  await orm.close();
  await database.drop();
  await dns.close();
});

describe('listQueue', () => {
  it('shows each source IP of a group together, the suspended groups first, with its connections, deferrals and last reply', async () => {
    const rows = await listQueue({ orm, clock });
    expect(rows.map((r) => [r.mx_group, r.source_ip])).toEqual([
      [GROUP, '198.51.100.1'],
      [GROUP, '198.51.100.2'],
      ['mx.quiet.test', '198.51.100.1'],
    ]);
    expect(rows[1]).toEqual({
      mx_group: GROUP,
      source_ip: '198.51.100.2',
      profile: 'default',
      connections: 0,
      deferrals: 1,
      connection_failures: 0,
      suspensions: 1,
      suspended_until: '2027-01-10T12:01:00.000Z',
      backoff_level: 1,
      last_reply: '421 rate_limited (temporary)',
      last_reply_at: now.toISOString(),
    });
    expect(rows[0]).toMatchObject({ connections: 1, deferrals: 0, suspended_until: null, backoff_level: 0 });
  });

  it('counts a suspension that has passed as none', async () => {
    const later = new Date(now.getTime() + 61_000);
    const rows = await listQueue({ orm, clock: () => later }, { group: GROUP });
    expect(rows.map((r) => [r.source_ip, r.suspended_until])).toEqual([
      ['198.51.100.1', null],
      ['198.51.100.2', null],
    ]);
    expect((await listQueue({ orm, clock: () => later }, { suspendedOnly: true })).length).toBe(0);
  });

  it('sums a group over source IPs for the metrics, the suspended first, at most the limit', async () => {
    expect(await topGroups({ orm, clock }, 1)).toEqual([
      { mx_group: GROUP, suspended: 1, connections: 1, deferrals: 1 },
    ]);
  });
});

describe('GET /metrics', () => {
  it('has the per-group gauges from one scrape, each group labelled by its key', async () => {
    const text = await new Metrics({ orm, clock, jobBacklog: async () => [] }).registry.metrics();
    expect(text).toContain(`postlane_mx_group_suspended{mx_group="${GROUP}"} 1`);
    expect(text).toContain(`postlane_mx_group_suspended{mx_group="mx.quiet.test"} 0`);
    expect(text).toContain(`postlane_mx_group_connections{mx_group="${GROUP}"} 1`);
    expect(text).toContain(`postlane_mx_group_deferrals{mx_group="${GROUP}"} 1`);
    expect(text).toContain(`postlane_mx_group_deferrals{mx_group="mx.quiet.test"} 0`);
  });
});

describe('suspendGroup and resumeGroup', () => {
  it('suspend by domain holds the group its MX names, from every source IP, and says which group', async () => {
    const until = new Date(now.getTime() + 3_600_000);
    const change = await suspendGroup(deps(), 'Shop.Example', until);
    expect(change).toEqual({
      group: GROUP,
      matched: 'domain',
      domain: 'shop.example',
      source_ips: ['198.51.100.1', '198.51.100.2'],
      suspended_until: until.toISOString(),
    });
    const rows = await listQueue({ orm, clock }, { group: GROUP });
    expect(rows.map((r) => r.suspended_until)).toEqual([until.toISOString(), until.toISOString()]);
    // The shaper itself refuses the group now.
    expect(await shaper.sendMessage(keyFrom('198.51.100.1'))).toMatchObject({ retryAt: until });
  });

  it('resume by group key lifts the suspension and resets the back-off', async () => {
    const change = await resumeGroup(deps(), GROUP);
    expect(change).toMatchObject({ group: GROUP, matched: 'group', domain: null, suspended_until: null });
    const rows = await listQueue({ orm, clock }, { group: GROUP });
    expect(rows.map((r) => [r.suspended_until, r.backoff_level])).toEqual([
      [null, 0],
      [null, 0],
    ]);
    expect(await shaper.sendMessage(keyFrom('198.51.100.1'))).toBe(true);
  });

  it('suspend by group key; a time not in the future is refused', async () => {
    const until = new Date(now.getTime() + 600_000);
    expect(await suspendGroup(deps(), 'mx.quiet.test', until)).toMatchObject({
      group: 'mx.quiet.test',
      matched: 'group',
      source_ips: ['198.51.100.1'],
    });
    await expect(suspendGroup(deps(), 'mx.quiet.test', now)).rejects.toThrow('until: must be in the future');
    await resumeGroup(deps(), 'mx.quiet.test');
  });

  it('a domain whose group has no state yet, or with no usable MX, is refused with the reason', async () => {
    await expect(resumeGroup(deps(), 'unsent.example')).rejects.toThrow(
      'direct delivery has no state for the MX group mx.elsewhere.test (of unsent.example) yet',
    );
    await expect(resumeGroup(deps(), 'nowhere.example')).rejects.toThrow(
      'nowhere.example is no MX group direct delivery has used, and as a domain: nowhere.example does not exist',
    );
  });
});

describe('the status section', () => {
  it('lists a suspended group with its source IP, until and last reply, and nothing when none is', async () => {
    const ctx = { orm, config: {} as never };
    expect(suspendedGroupsSection.view(await suspendedGroupsSection.collect(ctx), ctx)).toMatchObject({
      state: 'ok',
      summary: 'no MX group suspended',
    });
    // Real time here (status has no clock of its own): a suspension a year past the test's clock.
    await suspendGroup({ ...deps(), clock: () => new Date() }, GROUP, new Date('2099-01-01T00:00:00Z'));
    const view = suspendedGroupsSection.view(await suspendedGroupsSection.collect(ctx), ctx);
    expect(view.state).toBe('warn');
    expect(view.table!.rows).toContainEqual([
      GROUP,
      '198.51.100.2',
      '2099-01-01 00:00:00',
      '421 rate_limited (temporary) at 2027-01-10 12:00:00',
    ]);
    await resumeGroup(deps(), GROUP);
  });
});
