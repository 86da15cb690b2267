import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Domain, Email, type IEmail } from '../../../server/entities/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { recordEmailEvent } from '../../../server/services/emails/record-email-event.js';
import { compactMetricsRollup } from '../../../server/services/metrics/compact-metrics-rollup.js';
import { getEmailMetrics } from '../../../server/services/metrics/get-email-metrics.js';
import { recordClick, recordOpen } from '../../../server/services/tracking/record-tracking.js';
import { CLOCK_INSTANTS } from '../../support/clock-instants.js';
import { useTestApp } from '../../support/test-app.js';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const LINKS = ['https://shop.example/a', 'https://shop.example/b', 'https://shop.example/c'];
const HOUR = 3_600_000;
// Far from UTC on both sides, and one with DST.
const ZONES = ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/New_York', 'UTC'];

const app = useTestApp();

const sql = async <T>(query: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);

type Row = Record<string, number | string | undefined>;

/**
 * The metrics recomputed here from the team's emails and events, by the definitions of
 * docs/api.md and nothing of the server's: each thing counts in the UTC hour it happened; a click
 * (open) that a later `email.prefetched` repeats, same email, same timestamp (and link), does not
 * count; an email counts once toward `unique_*`, at its first one that counts.
 */
async function recompute(teamId: string, from: Date, to: Date, period: (hour: Date) => string) {
  const emails = (
    await sql<{ id: string; created_at: string }>(`SELECT id, created_at FROM email WHERE team_id = ?`, [teamId])
  ).map((e) => ({ ...e, created_at: new Date(e.created_at) }));
  const events = (
    await sql<{ email_id: string; type: string; created_at: string; payload: Record<string, any> }>(
      `SELECT email_id, type, created_at, payload FROM event WHERE team_id = ? AND email_id IS NOT NULL`,
      [teamId],
    )
  ).map((e) => ({ ...e, created_at: new Date(e.created_at) }));
  const retracted = (e: (typeof events)[number]) =>
    events.some(
      (p) =>
        p.type === 'email.prefetched' &&
        p.email_id === e.email_id &&
        (e.type === 'email.opened'
          ? p.payload.open && new Date(p.payload.open.timestamp).getTime() === e.created_at.getTime()
          : p.payload.click &&
            new Date(p.payload.click.timestamp).getTime() === e.created_at.getTime() &&
            p.payload.click.link === e.payload.click.link),
    );
  const standing = events.filter((e) => ['email.opened', 'email.clicked'].includes(e.type) && !retracted(e));
  const first = new Map<string, number>();
  for (const e of standing) {
    const key = `${e.type} ${e.email_id}`;
    first.set(key, Math.min(first.get(key) ?? Infinity, e.created_at.getTime()));
  }
  const rows = new Map<string, Record<string, number>>();
  const add = (at: Date, metric: string) => {
    const hour = new Date(Math.floor(at.getTime() / HOUR) * HOUR);
    if (hour < new Date(Math.floor(from.getTime() / HOUR) * HOUR) || hour >= to) return;
    for (const key of [period(hour), 'total']) {
      const row = rows.get(key) ?? {};
      row[metric] = (row[metric] ?? 0) + 1;
      rows.set(key, row);
    }
  };
  for (const email of emails) add(email.created_at, 'received');
  const plain: Record<string, string> = {
    'email.sent': 'sent',
    'email.delivered': 'delivered',
    'email.delivery_delayed': 'delivery_delayed',
    'email.failed': 'failed',
    'email.complained': 'complained',
  };
  for (const e of events) {
    if (plain[e.type]) add(e.created_at, plain[e.type]!);
    if (e.type === 'email.bounced' || e.type === 'email.soft_bounced') {
      const kind = e.payload.bounce?.type;
      add(e.created_at, 'bounced');
      add(
        e.created_at,
        kind === 'Permanent'
          ? 'bounced_permanent'
          : kind === 'Transient'
            ? 'bounced_transient'
            : 'bounced_undetermined',
      );
    }
  }
  for (const e of standing) {
    const name = e.type === 'email.opened' ? 'opened' : 'clicked';
    add(e.created_at, name);
    if (first.get(`${e.type} ${e.email_id}`) === e.created_at.getTime()) add(e.created_at, `unique_${name}`);
  }
  const withRates = (row: Record<string, number>) => {
    const n = (m: string) => row[m] ?? 0;
    const rate = (a: string, b: string) => (n(b) === 0 ? 0 : n(a) / n(b));
    return {
      ...row,
      delivery_rate: rate('delivered', 'sent'),
      open_rate: rate('unique_opened', 'delivered'),
      click_rate: rate('unique_clicked', 'delivered'),
      bounce_rate: rate('bounced', 'sent'),
      complaint_rate: rate('complained', 'delivered'),
    };
  };
  return new Map([...rows].map(([key, row]) => [key, withRates(row)]));
}

const COMPARED = [
  'received',
  'sent',
  'delivered',
  'delivery_delayed',
  'failed',
  'bounced',
  'bounced_permanent',
  'bounced_transient',
  'bounced_undetermined',
  'complained',
  'opened',
  'clicked',
  'unique_opened',
  'unique_clicked',
  'delivery_rate',
  'open_rate',
  'click_rate',
  'bounce_rate',
  'complaint_rate',
];
const pick = (row: Row | Record<string, number> | undefined) =>
  Object.fromEntries(COMPARED.map((m) => [m, Number((row as Row | undefined)?.[m] ?? 0)]));

const localDay = (zone: string) => (hour: Date) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(hour);

/**
 * Four emails from two sender domains, sent at the instant; over the next three days, in hours
 * that cross midnight in each zone: deliveries, a delay, a hard and a soft bounce, a complaint,
 * pixel opens, clicks, and a burst of clicks whose earlier clicks (and the open one brought) are
 * retracted.
 */
async function fillTeam(instant: Date) {
  app.deps.clock = () => instant;
  // A domain name has one owner across the appliance: the previous instant's team lets these go.
  await app.run(() => app.deps.orm.em.nativeDelete(Domain, { name: { $in: ['acme.test', 'news.acme.test'] } }));
  const team = await app.createTeamWithKey('full_access', { verifiedDomains: ['acme.test', 'news.acme.test'] });
  const resend = new Resend(team.token, { baseUrl: app.url } as never);
  const ids: string[] = [];
  for (const [i, from] of ['a@acme.test', 'b@acme.test', 'c@news.acme.test', 'd@news.acme.test'].entries()) {
    const { data, error } = await resend.emails.send({ from, to: `reader${i}@example.com`, subject: 'm', text: 'hi' });
    expect(error).toBeNull();
    ids.push(data!.id);
  }
  await app.run(async () => {
    const email = await app.deps.orm.em.findOneOrFail(Email, ids[0]!);
    await deliverDue(app.deps, email.region, ids);
  });
  const load = (id: string) =>
    app.deps.orm.em.fork().findOneOrFail(Email, id, { exclude: ['html', 'text'] }) as Promise<IEmail>;
  const at = (hours: number, ms = 0) => new Date(instant.getTime() + hours * HOUR + ms);
  const event = async (id: string, type: string, when: Date, extra: Record<string, unknown> = {}) => {
    const em = app.deps.orm.em.fork();
    await em.transactional(async (tx) => recordEmailEvent(app.deps, tx, await load(id), type, when, extra));
  };
  const bounce = (type: string) => ({ bounce: { type, subType: 'General', message: 'no', diagnosticCode: [] } });
  for (const [i, id] of ids.entries()) if (i !== 3) await event(id, 'email.delivered', at(1 + i * 7));
  await event(ids[3]!, 'email.delivery_delayed', at(2));
  await event(ids[3]!, 'email.bounced', at(13), bounce('Permanent'));
  await event(ids[2]!, 'email.soft_bounced', at(20), bounce('Transient'));
  await event(ids[1]!, 'email.complained', at(30));
  const request = (when: Date) => ({ ipAddress: '198.51.100.7', userAgent: CHROME, timestamp: when });
  // Email 0: a pixel open, a click, a second open a day later.
  await recordOpen(app.deps, app.deps.orm.em.fork(), await load(ids[0]!), request(at(3)));
  await recordClick(app.deps, app.deps.orm.em.fork(), await load(ids[0]!), {
    ...request(at(4)),
    link: LINKS[0]!,
    linkCount: 3,
  });
  await recordOpen(app.deps, app.deps.orm.em.fork(), await load(ids[0]!), request(at(28)));
  // Email 1: a scanner's burst across an hour boundary (the first two clicks are retracted), then a person's click.
  for (const [n, link] of LINKS.entries())
    await recordClick(app.deps, app.deps.orm.em.fork(), await load(ids[1]!), {
      ...request(at(9, -400 + n * 300)),
      link,
      linkCount: 3,
    });
  await recordClick(app.deps, app.deps.orm.em.fork(), await load(ids[1]!), {
    ...request(at(40)),
    link: LINKS[1]!,
    linkCount: 3,
  });
  return { team, resend, ids };
}

describe('the official resend SDK: emails.metrics', () => {
  it(
    'answers every metric by period, in zones far from UTC, exactly as recomputed from the events',
    { timeout: 120_000 },
    async () => {
      for (const instant of CLOCK_INSTANTS) {
        const { team, resend } = await fillTeam(instant);
        app.deps.clock = () => new Date(instant.getTime() + 10 * 24 * HOUR);
        for (const zone of ZONES) {
          const start = new Date(instant.getTime() - 24 * HOUR);
          const end = new Date(instant.getTime() + 5 * 24 * HOUR);
          const { data, error } = await resend.emails.metrics({
            startDate: start.toISOString(),
            endDate: end.toISOString(),
            timezone: zone,
            granularity: 'daily',
            dimensions: ['period'],
          });
          expect(error).toBeNull();
          const expected = await recompute(team.teamId, start, end, localDay(zone));
          expect([zone, pick(data!.totals)]).toEqual([zone, pick(expected.get('total'))]);
          const days = data!.data!.map((row) => row.period!.slice(0, 10));
          expect(new Set(days).size).toBe(days.length);
          for (const row of data!.data!)
            expect([zone, row.period, pick(row)]).toEqual([
              zone,
              row.period,
              pick(expected.get(row.period!.slice(0, 10))),
            ]);
          for (const day of expected.keys()) if (day !== 'total') expect(days).toContain(day);
        }
      }
    },
  );

  it('breaks down by domain and by hour, filters, and names only the metrics asked for', async () => {
    const instant = CLOCK_INSTANTS[2]!;
    const { resend, ids } = await fillTeam(instant);
    app.deps.clock = () => new Date(instant.getTime() + 10 * 24 * HOUR);
    const range = {
      startDate: new Date(instant.getTime() - HOUR).toISOString(),
      endDate: new Date(instant.getTime() + 3 * 24 * HOUR).toISOString(),
    };
    const { data: byDomain } = await resend.emails.metrics({
      ...range,
      dimensions: ['domain'],
      metrics: ['sent', 'delivered', 'bounced', 'delivery_rate'],
    });
    expect(byDomain!.metrics).toEqual(['delivered', 'bounced', 'sent', 'delivery_rate']);
    const rows = Object.fromEntries(byDomain!.data!.map((row) => [row.domain_name, row]));
    expect(rows['acme.test']).toMatchObject({ sent: 2, delivered: 2, bounced: 0, delivery_rate: 1 });
    expect(rows['news.acme.test']).toMatchObject({ sent: 2, delivered: 1, bounced: 2, delivery_rate: 0.5 });
    expect(Object.keys(rows['acme.test']!).sort()).toEqual(
      ['bounced', 'delivered', 'delivery_rate', 'domain_id', 'domain_name', 'sent'].sort(),
    );

    const only = await resend.emails.metrics({ ...range, domainId: [rows['news.acme.test']!.domain_id!] });
    expect(only.data!.totals).toMatchObject({ sent: 2, received: 2 });
    expect(only.data!.data).toBeUndefined();

    const hourly = await resend.emails.metrics({ ...range, granularity: 'hourly', dimensions: ['period'] });
    // Every hour that starts within the range: from 22:00 (the start, 22:30, is in it) to 23:00 three days on.
    expect(hourly.data!.data!.length).toBe(3 * 24 + 2);
    expect(hourly.data!.data!.reduce((n, row) => n + (row.delivered ?? 0), 0)).toBe(3);

    const perEmail = await resend.emails.metrics({ ...range, dimensions: ['email'], emailId: [ids[0]!, ids[1]!] });
    const byEmail = Object.fromEntries(perEmail.data!.data!.map((row) => [row.email_id, row]));
    expect(byEmail[ids[0]!]).toMatchObject({ opened: 2, unique_opened: 1, clicked: 1, unique_clicked: 1 });
    expect(byEmail[ids[1]!]).toMatchObject({ clicked: 1, unique_clicked: 1, complained: 1 });
  });

  it('answers the same once maintenance has folded the rollup of past hours, and the same as the events', async () => {
    const instant = CLOCK_INSTANTS[1]!;
    const { team, resend } = await fillTeam(instant);
    const now = new Date(instant.getTime() + 10 * 24 * HOUR);
    app.deps.clock = () => now;
    const hourly = async () =>
      (
        await resend.emails.metrics({
          startDate: new Date(instant.getTime() - HOUR).toISOString(),
          endDate: new Date(instant.getTime() + 3 * 24 * HOUR).toISOString(),
          granularity: 'hourly',
          dimensions: ['period', 'domain'],
        })
      ).data;
    const slots = async () =>
      (
        await sql<{ n: string }>('SELECT count(*) AS n FROM email_metrics_hourly WHERE team_id = ? AND slot <> 0', [
          team.teamId,
        ])
      )[0]!.n;
    const before = await hourly();
    expect(Number(await slots())).toBeGreaterThan(0);
    expect(await compactMetricsRollup(app.deps)).toBeGreaterThan(0);
    expect(Number(await slots())).toBe(0);
    expect(await hourly()).toEqual(before);
    const fromEvents = await app.run(() =>
      getEmailMetrics(
        app.deps.orm.em,
        team.teamId,
        {
          startDate: new Date(instant.getTime() - HOUR).toISOString(),
          endDate: new Date(instant.getTime() + 3 * 24 * HOUR).toISOString(),
          timezone: 'UTC',
          granularity: 'hourly',
          metrics: [],
          dimensions: [],
          domainIds: [],
          emailIds: [],
          broadcastIds: [],
          fromEvents: true,
        },
        now,
      ),
    );
    expect(fromEvents.totals).toMatchObject({ sent: 4, delivered: 3, complained: 1 });
    expect(pick(fromEvents.totals as Row)).toEqual(pick(before!.totals as Row));
  });

  it('refuses what Resend refuses', async () => {
    const { resend } = await fillTeam(CLOCK_INSTANTS[0]!);
    const refusal = async (options: Parameters<Resend['emails']['metrics']>[0]) =>
      (await resend.emails.metrics(options)).error;
    expect(await refusal({ timezone: 'Mars/Olympus' })).toMatchObject({ name: 'validation_error' });
    expect(await refusal({ startDate: '2026-03-10', endDate: '2026-03-01' })).toMatchObject({
      name: 'validation_error',
    });
    expect(
      await refusal({ startDate: '2020-01-01T00:00:00Z', endDate: '2026-01-01T00:00:00Z', granularity: 'hourly' }),
    ).toMatchObject({ name: 'validation_error', message: expect.stringContaining('10000') });
    expect(await refusal({ dimensions: ['email', 'broadcast'] as never })).toMatchObject({ name: 'validation_error' });
    expect(await refusal({ metrics: ['nope'] as never })).toMatchObject({ name: 'validation_error' });
    expect(await refusal({ startDate: 'yesterday' })).toMatchObject({ name: 'validation_error' });
  });
});
