import type { Resend } from 'resend';
import { beforeAll, describe, expect, it } from 'vitest';
import { Email, type IEmail } from '../../../server/entities/index.js';
import { recordEmailEvent } from '../../../server/services/emails/record-email-event.js';
import { recordClick, recordOpen } from '../../../server/services/tracking/record-tracking.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const PRICING = 'https://acme.test/pricing';
const BLOG = 'https://acme.test/blog';
const READERS = ['ann@example.com', 'bob@example.com', 'cyd@example.com', 'dee@example.com', 'eve@example.com'];

let resend: Resend;
let broadcastId: string;
const emailOf = new Map<string, string>();

const app = useTestApp({ jobs: 'worker', team: { verifiedDomains: ['acme.test'] } });
beforeAll(async () => {
  resend = app.sdk(app.token);
  const { data: segment } = await resend.segments.create({ name: 'Readers' });
  for (const email of READERS) await resend.contacts.create({ email, segments: [{ id: segment!.id }] });
  const { data: created } = await resend.broadcasts.create({
    segmentId: segment!.id,
    from: 'Acme <news@acme.test>',
    subject: 'News',
    html: `<a href="${PRICING}">pricing</a> <a href="${BLOG}">blog</a>`,
    name: 'December',
  });
  broadcastId = created!.id;
  await resend.broadcasts.send(broadcastId);
  await until(async () => (await resend.broadcasts.get(broadcastId)).data?.status === 'sent', 30_000);
  const rows = await app.deps.orm.em
    .fork()
    .getConnection()
    .execute<{ id: string; to: string[] }[]>(`SELECT id, "to" FROM email WHERE broadcast_id = ?`, [broadcastId]);
  for (const row of rows) emailOf.set(row.to[0]!.toLowerCase(), row.id);

  const load = (address: string) =>
    app.deps.orm.em
      .fork()
      .findOneOrFail(Email, emailOf.get(address)!, { exclude: ['html', 'text'] }) as Promise<IEmail>;
  const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
  const event = async (address: string, type: string, extra: Record<string, unknown> = {}) => {
    const email = await load(address);
    await app.deps.orm.em.fork().transactional((tx) => recordEmailEvent(app.deps, tx, email, type, later(5), extra));
  };
  const bounce = (type: string) => ({ bounce: { type, subType: 'General', message: 'no', diagnosticCode: [] } });
  for (const address of READERS.slice(0, 3)) await event(address, 'email.delivered');
  await event('dee@example.com', 'email.bounced', bounce('Permanent'));
  await event('eve@example.com', 'email.soft_bounced', bounce('Transient'));
  await event('bob@example.com', 'email.complained');
  const request = (minutes: number) => ({ ipAddress: '198.51.100.7', userAgent: CHROME, timestamp: later(minutes) });
  await recordOpen(app.deps, app.deps.orm.em.fork(), await load('ann@example.com'), request(10));
  await recordOpen(app.deps, app.deps.orm.em.fork(), await load('ann@example.com'), request(20));
  for (const [minutes, link] of [
    [11, PRICING],
    [12, PRICING],
    [13, BLOG],
  ] as const)
    await recordClick(app.deps, app.deps.orm.em.fork(), await load('ann@example.com'), {
      ...request(minutes),
      link,
      linkCount: 2,
    });
  await recordClick(app.deps, app.deps.orm.em.fork(), await load('cyd@example.com'), {
    ...request(30),
    link: PRICING,
    linkCount: 2,
  });
  await resend.contacts.update({ email: 'cyd@example.com', unsubscribed: true });
}, 90_000);

const emails = (page: { data: { email: string }[] }) => page.data.map((r) => r.email);

describe('the official resend SDK: broadcast recipients and clicked links', () => {
  it('lists the recipients of each type, with counts, links and bounce types where they apply', async () => {
    const list = async (type: Parameters<Resend['broadcasts']['recipients']>[1]['type']) => {
      const { data, error } = await resend.broadcasts.recipients(broadcastId, { type });
      expect(error).toBeNull();
      return data!;
    };
    expect(emails(await list('sent')).sort()).toEqual(READERS);
    expect(emails(await list('delivered')).sort()).toEqual(READERS.slice(0, 3));
    expect((await list('opened')).data).toEqual(
      [
        { id: expect.any(String), contact_id: expect.any(String), email: 'ann@example.com', count: 2 },
        // A click brings an open when nobody had opened.
        { id: expect.any(String), contact_id: expect.any(String), email: 'cyd@example.com', count: 1 },
      ].sort((a, b) => (emailOf.get(a.email)! < emailOf.get(b.email)! ? -1 : 1)),
    );
    const clicked = Object.fromEntries((await list('clicked')).data.map((r) => [r.email, r]));
    expect(clicked['ann@example.com']).toMatchObject({
      count: 3,
      clicked_links: [
        { url: BLOG, clicks: 1 },
        { url: PRICING, clicks: 2 },
      ],
    });
    expect(clicked['cyd@example.com']).toMatchObject({ count: 1, clicked_links: [{ url: PRICING, clicks: 1 }] });
    const bounced = Object.fromEntries((await list('bounced')).data.map((r) => [r.email, r.bounce_type]));
    expect(bounced).toEqual({ 'dee@example.com': 'permanent', 'eve@example.com': 'transient' });
    expect(emails(await list('complained'))).toEqual(['bob@example.com']);
    expect(emails(await list('unsubscribed'))).toEqual(['cyd@example.com']);
    expect(emails(await list('suppressed'))).toEqual([]);
  });

  it('lists the same unsubscribed recipients once most of the team has unsubscribed (the recipients are walked)', async () => {
    for (let i = 0; i < 12; i += 1) await resend.contacts.create({ email: `gone${i}@example.com`, unsubscribed: true });
    const { data } = await resend.broadcasts.recipients(broadcastId, { type: 'unsubscribed' });
    expect(emails(data!)).toEqual(['cyd@example.com']);
    const { data: page } = await resend.broadcasts.recipients(broadcastId, { type: 'unsubscribed', limit: 1 });
    expect([emails(page!), page!.has_more]).toEqual([['cyd@example.com'], false]);
  });

  it('filters by address and bounce type, and pages with opaque cursors both ways', async () => {
    const byEmail = await resend.broadcasts.recipients(broadcastId, { type: 'sent', email: 'Bob@Example.com' });
    expect(emails(byEmail.data!)).toEqual(['bob@example.com']);
    const hard = await resend.broadcasts.recipients(broadcastId, { type: 'bounced', bounceType: 'permanent' });
    expect(emails(hard.data!)).toEqual(['dee@example.com']);

    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const { data } = await resend.broadcasts.recipients(broadcastId, { type: 'sent', limit: 2, after });
      seen.push(...emails(data!));
      if (!data!.has_more) break;
      after = data!.data.at(-1)!.id;
    }
    expect(seen.sort()).toEqual(READERS);
    const all = (await resend.broadcasts.recipients(broadcastId, { type: 'sent' })).data!.data;
    const back = await resend.broadcasts.recipients(broadcastId, { type: 'sent', limit: 2, before: all[3]!.id });
    expect(back.data!.data.map((r) => r.id)).toEqual([all[1]!.id, all[2]!.id]);
    expect(back.data!.has_more).toBe(true);

    const wrong = await resend.broadcasts.recipients(broadcastId, { type: 'sent', bounceType: 'permanent' as never });
    expect(wrong.error).toMatchObject({ name: 'validation_error' });
    const missing = await app.request('GET', `/broadcasts/${broadcastId}/recipients`, { token: app.token });
    expect(missing.status).toBe(422);
  });

  it('lists the clicked links with clicks and unique clicks, in opaque-cursor pages', async () => {
    const { data, error } = await resend.broadcasts.clickedLinks(broadcastId);
    expect(error).toBeNull();
    expect(data!.data.map(({ url, clicks, unique_clicks }) => ({ url, clicks, unique_clicks }))).toEqual([
      { url: BLOG, clicks: 1, unique_clicks: 1 },
      { url: PRICING, clicks: 3, unique_clicks: 2 },
    ]);
    const first = await resend.broadcasts.clickedLinks(broadcastId, { limit: 1 });
    expect(first.data!.has_more).toBe(true);
    const second = await resend.broadcasts.clickedLinks(broadcastId, { limit: 1, after: first.data!.data[0]!.id });
    expect(second.data!.data.map((r) => r.url)).toEqual([PRICING]);
    expect(second.data!.has_more).toBe(false);
  });

  it("answers 404 for another team's broadcast", async () => {
    const other = app.sdk((await app.createTeamWithKey()).token);
    expect((await other.broadcasts.recipients(broadcastId, { type: 'sent' })).error).toMatchObject({
      name: 'not_found',
    });
    expect((await other.broadcasts.clickedLinks(broadcastId)).error).toMatchObject({ name: 'not_found' });
  });
});
